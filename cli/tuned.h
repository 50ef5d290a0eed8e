#pragma once
// `schedc run FILE --tuned` (docs/tuning.md): the tuning database's fastest
// correct schedule for FILE's dtype and the problem's shape on this device,
// run in FILE's place. FILE may be a search space (the one that was tuned)
// or a schedule; with no result for the shape, a schedule runs as it is and
// a space is an error. A convolution module's result is the one recorded
// for its convolution (--conv, else its schedule's `conv`).

#include <optional>
#include <string>

#include "cli/conv_options.h"
#include "cli/pipeline.h"
#include "runtime/device.h"

namespace schedc::cli {

// What to run, or nothing with the reason printed on stderr and `rc` set.
// `shape` is --shape ("" = the schedule's own), `conv` --conv (a
// convolution module's), `database` --db ("" = the default path).
std::optional<Compiled> tuned_schedule(const std::string& file, const std::string& shape,
                                       const ConvOptions& conv, const std::string& database,
                                       const std::optional<runtime::DeviceInfo>& device,
                                       const compiler::Target& target, int& rc);

}  // namespace schedc::cli
