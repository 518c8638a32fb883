// Halo's exception: what went wrong, with the values involved and a hint for the fix.
// Thrown anywhere in core/, caught and shown only in app/ and gui/.
#pragma once

#include <stdexcept>
#include <string>

namespace halo::util {

class Error : public std::runtime_error {
 public:
  // what: the problem with its values; hint: what the user can do (may be empty).
  Error(std::string what, std::string hint = {});
  const std::string& problem() const { return problem_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string problem_;
  std::string hint_;
};

}  // namespace halo::util
