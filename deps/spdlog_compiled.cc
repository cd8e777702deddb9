// spdlog as a compiled library (SPDLOG_COMPILED_LIB), built here from Debian's libspdlog-dev
// headers so that nvsentry links it statically (deps/CMakeLists.txt says why): the definitions
// come from the -inl.h headers; the sink classes and factories nvsentry uses are instantiated.
#include <mutex>

#include "spdlog/common-inl.h"
#include "spdlog/details/backtracer-inl.h"
#include "spdlog/details/console_globals.h"
#include "spdlog/details/file_helper-inl.h"
#include "spdlog/details/log_msg-inl.h"
#include "spdlog/details/log_msg_buffer-inl.h"
#include "spdlog/details/os-inl.h"
#include "spdlog/details/periodic_worker-inl.h"
#include "spdlog/details/registry-inl.h"
#include "spdlog/logger-inl.h"
#include "spdlog/pattern_formatter-inl.h"
#include "spdlog/sinks/ansicolor_sink-inl.h"
#include "spdlog/sinks/base_sink-inl.h"
#include "spdlog/sinks/basic_file_sink-inl.h"
#include "spdlog/sinks/sink-inl.h"
#include "spdlog/sinks/stdout_sinks-inl.h"
#include "spdlog/spdlog-inl.h"
template class spdlog::sinks::base_sink<std::mutex>;
// The registry's default logger writes to a colour sink on standard output.
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stdout_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::basic_file_sink<std::mutex>;
// The factories nvsentry calls (sentry/main.cc, sentry/fake_l4t_cmd.cc).
template std::shared_ptr<spdlog::logger> spdlog::stderr_logger_mt<spdlog::synchronous_factory>(
    const std::string&);
template std::shared_ptr<spdlog::logger> spdlog::stdout_logger_mt<spdlog::synchronous_factory>(
    const std::string&);
