// Draws a synthetic camera image of a frame with OpenCV: sky, textured ground, road surface
// and lane centerlines projected through the camera, traffic elements in the front view.
#pragma once

#include <array>
#include <cstddef>

#include <opencv2/core.hpp>

#include "data/Frame.h"

namespace halo::data {

// BGR colour a lane centerline is painted with (connectors differ from ordinary lanes).
cv::Scalar lane_colour(bool is_intersection_or_connector);

// BGR colour of a traffic element's attribute (0..12): the sign's face or the light's lamp.
cv::Scalar attribute_colour(int64_t attribute);

// The image of `frame.cameras[camera]` (its width x height, CV_8UC3 BGR) showing `annotation`;
// traffic elements are drawn only in the front view (camera 0), where their boxes lie.
cv::Mat render_view(const Frame& frame, const Annotation& annotation, size_t camera);

}  // namespace halo::data
