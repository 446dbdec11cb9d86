#pragma once

#include <boost/system/result.hpp>

#include "core/error.h"

namespace sluice {

// Data-plane functions return Result<T> instead of throwing for expected failures.
template <class T>
using Result = boost::system::result<T, Error>;

// Called by Result<T>::value() on an error; expected failures should be checked with
// has_value() first, so reaching this is a bug.
[[noreturn]] void throw_exception_from_error(const Error& e, const boost::source_location& loc);

}  // namespace sluice
