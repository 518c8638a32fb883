# Reference side of the OpenLane-V2 metric tests: writes synthetic ground-truth frames in the
# dataset's own JSON format plus perturbed predictions, and scores them with the official
# openlanev2 devkit (2.1.0, installed in the .venv without its pins).
#
#   devkit_reference.py generate ROOT SEED   -> ROOT/val/<segment>/info/<ts>.json,
#                                               ROOT/pred_<variant>.json, ROOT/expected.json
#   devkit_reference.py score ROOT PRED.json -> prints the devkit's {DET_l, DET_t, TOP_ll, TOP_lt, OLS}
import json
import os
import pickle
import sys
import types
from functools import partial

import numpy as np

# openlanev2 2.1.0's evaluation/f_score.py imports `ortools.graph.pywrapgraph` at import
# time (it pins ortools 9.2, which has no wheel for Python 3.11, and later ortools dropped that
# module). That file only computes the "F-Score for 3D Lane", which is not part of the
# OpenLane-V2 score. So: an empty module answers that one import, and the F-score call at the
# end of evaluate() (after OLS is complete) is replaced by a stand-in returning NaN. Nothing
# that computes DET_l, DET_t, TOP_ll, TOP_lt or OLS is touched.
_ortools = types.ModuleType("ortools")
_graph = types.ModuleType("ortools.graph")
_pywrapgraph = types.ModuleType("ortools.graph.pywrapgraph")
_ortools.graph, _graph.pywrapgraph = _graph, _pywrapgraph
for _m in (_ortools, _graph, _pywrapgraph):
    sys.modules.setdefault(_m.__name__, _m)

from openlanev2.centerline.evaluation import evaluate as devkit_evaluate  # noqa: E402
from openlanev2.centerline.preprocessing import collect  # noqa: E402

_evaluate_module = sys.modules["openlanev2.centerline.evaluation.evaluate"]


class _NoFScore:
    def bench_one_submit(self, gts, preds):
        return float("nan")


_evaluate_module.f1 = _NoFScore()

SPLIT = "val"
KEYS = ["DET_l", "DET_t", "TOP_ll", "TOP_lt", "OLS"]


# ---------------------------------------------------------------- ground truth ---------
def curve(rng, n=201):
    """A smooth 3-D lane centerline of n points (arc with random curvature and slope)."""
    x0, y0 = rng.uniform(-35, 35), rng.uniform(-18, 18)
    heading = rng.uniform(-np.pi, np.pi)
    length = rng.uniform(8, 45)
    curvature = rng.uniform(-0.04, 0.04)
    s = np.linspace(0, length, n)
    theta = heading + curvature * s
    ds = length / (n - 1)
    x = x0 + np.concatenate([[0], np.cumsum(np.cos(theta[:-1]) * ds)])
    y = y0 + np.concatenate([[0], np.cumsum(np.sin(theta[:-1]) * ds)])
    z = rng.uniform(-0.5, 0.5) + rng.uniform(-0.02, 0.02) * s
    return np.stack([x, y, z], 1)


def box(rng):
    x1, y1 = rng.uniform(0, 1900), rng.uniform(0, 1400)
    w, h = rng.uniform(15, 160), rng.uniform(15, 160)
    return [[x1, y1], [x1 + w, y1 + h]]


def annotation(rng, n_lanes, n_elements, topology=True):
    lanes = [{"id": 100 + i, "points": np.round(curve(rng), 4).tolist(),
              "is_intersection_or_connector": bool(rng.random() < 0.3)} for i in range(n_lanes)]
    elements = [{"id": 500 + i, "category": int(rng.integers(1, 3)), "attribute": int(rng.integers(0, 13)),
                 "points": np.round(box(rng), 2).tolist()} for i in range(n_elements)]
    lclc = (rng.random((n_lanes, n_lanes)) < (0.25 if topology else 0)).astype(int)
    np.fill_diagonal(lclc, 0)
    lcte = (rng.random((n_lanes, n_elements)) < (0.3 if topology else 0)).astype(int)
    return {"lane_centerline": lanes, "traffic_element": elements,
            "topology_lclc": lclc.tolist(), "topology_lcte": lcte.tolist()}


def frame_json(segment, timestamp, ann):
    eye = np.eye(3).tolist()
    return {
        "version": "v2.1.0", "segment_id": segment, "timestamp": timestamp, "meta_data": {},
        "sensor": {"ring_front_center": {
            "image_path": f"{SPLIT}/{segment}/image/ring_front_center/{timestamp}.jpg",
            "extrinsic": {"rotation": eye, "translation": [1.0, 0.0, 1.5]},
            "intrinsic": {"K": [[1000.0, 0, 775.0], [0, 1000.0, 1024.0], [0, 0, 1]], "distortion": []}}},
        "pose": {"rotation": eye, "translation": [0.0, 0.0, 0.0]},
        "annotation": ann,
    }


def write_ground_truth(root, rng):
    """Two segments of ordinary frames plus the edge cases: nothing at all, lanes only,
    elements only, and lanes and elements with no relation between them."""
    specs = [(int(rng.integers(3, 9)), int(rng.integers(2, 8)), True) for _ in range(6)]
    specs += [(0, 0, True), (4, 0, True), (0, 5, True), (5, 4, False)]
    frames = {}
    for k, (nl, ne, topo) in enumerate(specs):
        segment = f"{10000 + k % 2}"
        timestamp = f"{315967376899927209 + 100000 * k}"
        ann = annotation(rng, nl, ne, topo)
        path = os.path.join(root, SPLIT, segment, "info", f"{timestamp}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(frame_json(segment, timestamp, ann), f)
        frames[f"{SPLIT}/{segment}/{timestamp}"] = ann
    return frames


# ---------------------------------------------------------------- predictions ----------
def perturb(rng, ann, lane_noise, drop, extra, wrong_attribute, box_noise, duplicate=0.0):
    gl, ge = ann["lane_centerline"], ann["traffic_element"]
    keep_l = [i for i in range(len(gl)) if rng.random() >= drop]
    keep_e = [i for i in range(len(ge)) if rng.random() >= drop]
    lanes, src_l = [], []
    for i in keep_l:
        pts = np.asarray(gl[i]["points"])
        n = int(rng.choice([11, 51, 201]))
        pts = pts[np.round(np.linspace(0, len(pts) - 1, n)).astype(int)]
        sigma = lane_noise * rng.uniform(0.2, 2.0)
        pts = pts + rng.normal(0, sigma, pts.shape) * 0.3 + rng.normal(0, sigma, (1, 3))
        lanes.append(pts)
        src_l.append(i)
        if rng.random() < duplicate:  # a second detection of the same lane: a false positive
            lanes.append(pts + rng.normal(0, 0.1, pts.shape))
            src_l.append(i)
    for _ in range(int(rng.poisson(extra))):
        lanes.append(curve(rng, int(rng.choice([11, 201]))))
        src_l.append(-1)
    elements, src_e = [], []
    for i in keep_e:
        b = np.asarray(ge[i]["points"]) + rng.normal(0, box_noise * rng.uniform(0.2, 2.0), (2, 2))
        b[1] = np.maximum(b[1], b[0] + 1)
        attr = ge[i]["attribute"] if rng.random() >= wrong_attribute else int(rng.integers(0, 13))
        elements.append((b, attr))
        src_e.append(i)
    for _ in range(int(rng.poisson(extra))):
        elements.append((np.asarray(box(rng)), int(rng.integers(0, 13))))
        src_e.append(-1)
    order_l, order_e = rng.permutation(len(lanes)), rng.permutation(len(elements))
    lanes = [lanes[i] for i in order_l]
    src_l = [src_l[i] for i in order_l]
    elements = [elements[i] for i in order_e]
    src_e = [src_e[i] for i in order_e]

    def score(truth):  # relation confidence: informative but noisy
        return float(np.clip(0.45 * truth + rng.uniform(0.05, 0.75), 0, 1))

    lclc = [[score(a >= 0 and b >= 0 and ann["topology_lclc"][a][b]) for b in src_l] for a in src_l]
    lcte = [[score(a >= 0 and b >= 0 and ann["topology_lcte"][a][b]) for b in src_e] for a in src_l]
    return {
        "lane_centerline": [{"id": 1000 + i, "points": p.tolist(), "confidence": float(rng.uniform(0.05, 1))}
                            for i, p in enumerate(lanes)],
        "traffic_element": [{"id": 2000 + i, "attribute": a, "points": b.tolist(), "confidence": float(rng.uniform(0.05, 1))}
                            for i, (b, a) in enumerate(elements)],
        "topology_lclc": lclc, "topology_lcte": lcte,
    }


def perfect(rng, ann):
    return {
        "lane_centerline": [{"id": l["id"], "points": l["points"], "confidence": float(rng.uniform(0.5, 1))}
                            for l in ann["lane_centerline"]],
        "traffic_element": [{"id": e["id"], "attribute": e["attribute"], "points": e["points"],
                             "confidence": float(rng.uniform(0.5, 1))} for e in ann["traffic_element"]],
        "topology_lclc": [[float(v) for v in row] for row in ann["topology_lclc"]],
        "topology_lcte": [[float(v) for v in row] for row in ann["topology_lcte"]],
    }


def nothing(rng, ann):
    return {"lane_centerline": [], "traffic_element": [], "topology_lclc": [], "topology_lcte": []}


VARIANTS = {  # name -> make(rng, annotation) -> predictions of one frame
    "perfect": perfect,
    "empty": nothing,
    "close": partial(perturb, lane_noise=0.3, drop=0.1, extra=0.5, wrong_attribute=0.1, box_noise=3.0),
    "duplicates": partial(perturb, lane_noise=0.2, drop=0.1, extra=0.5, wrong_attribute=0.1, box_noise=3.0,
                          duplicate=0.5),
    "noisy": partial(perturb, lane_noise=1.0, drop=0.25, extra=1.5, wrong_attribute=0.25, box_noise=10.0),
    "poor": partial(perturb, lane_noise=2.5, drop=0.4, extra=3.0, wrong_attribute=0.5, box_noise=30.0),
}


# ---------------------------------------------------------------- devkit -----------------
def load_predictions(path):
    """PRED.json -> the devkit's prediction dict (numpy arrays, tuple keys)."""
    with open(path) as f:
        doc = json.load(f)
    results = {}
    for key, value in doc["results"].items():
        p = value["predictions"]
        lanes = [{"id": l["id"], "points": np.asarray(l["points"], dtype=np.float64).reshape(-1, 3),
                  "confidence": l["confidence"]} for l in p["lane_centerline"]]
        elements = [{"id": e["id"], "attribute": e["attribute"], "confidence": e["confidence"],
                     "points": np.asarray(e["points"], dtype=np.float64)} for e in p["traffic_element"]]
        nl, ne = len(lanes), len(elements)
        results[tuple(key.split("/"))] = {"predictions": {
            "lane_centerline": lanes, "traffic_element": elements,
            "topology_lclc": np.asarray(p["topology_lclc"], dtype=np.float64).reshape(nl, nl),
            "topology_lcte": np.asarray(p["topology_lcte"], dtype=np.float64).reshape(nl, ne)}}
    return {"method": doc.get("method", "halo"), "results": results}


def load_ground_truth(root):
    """The devkit's own collect() over every frame of the split, as it builds <collection>.pkl."""
    data_dict = {SPLIT: {}}
    for segment in sorted(os.listdir(os.path.join(root, SPLIT))):
        data_dict[SPLIT][segment] = sorted(os.listdir(os.path.join(root, SPLIT, segment, "info")))
    collect(root, data_dict, "halo_reference")
    with open(os.path.join(root, "halo_reference.pkl"), "rb") as f:
        return pickle.load(f)


def score(ground_truth, pred_path):
    m = devkit_evaluate(ground_truth, load_predictions(pred_path), verbose=False)["OpenLane-V2 Score"]
    return {"DET_l": float(m["DET_l"]), "DET_t": float(m["DET_t"]), "TOP_ll": float(m["TOP_ll"]),
            "TOP_lt": float(m["TOP_lt"]), "OLS": float(m["score"])}


def generate(root, seed):
    rng = np.random.default_rng(seed)
    frames = write_ground_truth(root, rng)
    ground_truth = load_ground_truth(root)
    expected = {}
    for name, make in VARIANTS.items():
        results = {key: {"predictions": make(rng, ann)} for key, ann in frames.items()}
        path = os.path.join(root, f"pred_{name}.json")
        with open(path, "w") as f:
            json.dump({"method": "devkit_reference", "results": results}, f)
        expected[name] = score(ground_truth, path)
    with open(os.path.join(root, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    print(json.dumps(expected))


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "score":
        print(json.dumps(score(load_ground_truth(sys.argv[2]), sys.argv[3])))
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
