#include "hostshim/sim/engines/helper_thread.h"

#include <utility>

namespace nvsentry::hostshim::sim {

HelperThread::HelperThread(std::function<void()> fn) : start_(new Start{std::move(fn), {}, false}) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return;
  if (sched_getaffinity(0, sizeof start_->all, &start_->all) == 0) {
    cpu_set_t others = start_->all;
    const int here = sched_getcpu();
    if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &others);
    start_->moved =
        CPU_COUNT(&others) > 0 && pthread_attr_setaffinity_np(&attr, sizeof others, &others) == 0;
  }
  started_ = pthread_create(&thread_, &attr, &HelperThread::Main, start_.get()) == 0;
  pthread_attr_destroy(&attr);
}

HelperThread::~HelperThread() {
  if (started_) pthread_join(thread_, nullptr);
}

void* HelperThread::Main(void* arg) {
  Start* s = static_cast<Start*>(arg);
  if (s->moved) pthread_setaffinity_np(pthread_self(), sizeof s->all, &s->all);
  s->fn();
  return nullptr;
}

}  // namespace nvsentry::hostshim::sim
