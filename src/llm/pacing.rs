//! Client-side rate limiting shared by concurrent reviews: requests per
//! minute and tokens per minute over sliding one-minute windows, so a batch
//! stays under a provider's limits instead of collecting 429s, and a cap on
//! the requests in flight at once (`Slots`), shared by the reviews of a
//! batch and the parts of each review. It only decides when a request may
//! start; it never sends anything.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

/// Time, injectable so that tests need not sleep for minutes.
pub(crate) trait Clock: Send + Sync {
    fn now(&self) -> Instant;
    fn sleep(&self, duration: Duration);
}

struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Shared by all reviews of a batch (wrap it in an `Arc`, or share a
/// reference across scoped threads).
pub struct Pacer {
    shared: Arc<Shared>,
}

struct Shared {
    rpm: Option<u32>,
    tpm: Option<u32>,
    clock: Box<dyn Clock>,
    state: Mutex<State>,
    released: Condvar,
}

#[derive(Default)]
struct State {
    /// Start time and token count of each request of the last minute.
    recent: VecDeque<(Instant, u64)>,
    in_flight: usize,
}

/// What to do about a request now.
#[derive(Debug, PartialEq)]
enum Decision {
    Go,
    /// The windows free enough room after this long.
    WaitFor(Duration),
    /// Larger than the token limit on its own: it goes alone, once the
    /// requests in flight have finished.
    WaitForRelease,
}

/// A request slot; dropping it marks the request no longer in flight.
pub struct Permit {
    shared: Arc<Shared>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        drop(state);
        self.shared.released.notify_all();
    }
}

impl Pacer {
    /// `None` means no limit of that kind.
    pub fn new(rpm: Option<u32>, tpm: Option<u32>) -> Pacer {
        Pacer::with_clock(rpm, tpm, Box::new(SystemClock))
    }

    pub(crate) fn with_clock(rpm: Option<u32>, tpm: Option<u32>, clock: Box<dyn Clock>) -> Pacer {
        Pacer {
            shared: Arc::new(Shared {
                // A limit of 0 would block forever; treat it as "no limit".
                rpm: rpm.filter(|&limit| limit > 0),
                tpm: tpm.filter(|&limit| limit > 0),
                clock,
                state: Mutex::new(State::default()),
                released: Condvar::new(),
            }),
        }
    }

    /// Blocks until a request of `tokens` tokens fits both windows, and
    /// returns its permit. `on_wait` is told each timed wait before it starts
    /// (so the caller can say why a review pauses); waits for a request in
    /// flight to finish are not timed and not reported.
    pub fn acquire(&self, tokens: u64, on_wait: &dyn Fn(Duration)) -> Permit {
        let shared = &self.shared;
        let mut state = shared.lock();
        loop {
            let now = shared.clock.now();
            match decide(&mut state, shared.rpm, shared.tpm, tokens, now) {
                Decision::Go => {
                    state.recent.push_back((now, tokens));
                    state.in_flight += 1;
                    return Permit {
                        shared: Arc::clone(shared),
                    };
                }
                Decision::WaitFor(duration) => {
                    drop(state);
                    on_wait(duration);
                    shared.clock.sleep(duration);
                    state = shared.lock();
                }
                Decision::WaitForRelease => {
                    state = shared
                        .released
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

impl Shared {
    /// The state stays consistent even if a holder panicked (every update
    /// is a single push or counter change), so a poisoned lock is usable.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Forgets requests older than the window, then decides.
fn decide(
    state: &mut State,
    rpm: Option<u32>,
    tpm: Option<u32>,
    tokens: u64,
    now: Instant,
) -> Decision {
    while let Some(&(start, _)) = state.recent.front() {
        if now.duration_since(start) >= WINDOW {
            state.recent.pop_front();
        } else {
            break;
        }
    }
    // The time until the request at `index` leaves the window.
    let expiry = |index: usize| {
        let (start, _) = state.recent[index];
        (start + WINDOW).saturating_duration_since(now)
    };
    if let Some(rpm) = rpm {
        let limit = rpm as usize;
        if state.recent.len() >= limit {
            // Room for one more once the oldest surplus requests expire.
            return Decision::WaitFor(expiry(state.recent.len() - limit));
        }
    }
    if let Some(tpm) = tpm.map(u64::from) {
        if tokens > tpm {
            return if state.in_flight == 0 {
                Decision::Go
            } else {
                Decision::WaitForRelease
            };
        }
        let mut used: u64 = state.recent.iter().map(|&(_, t)| t).sum();
        if used + tokens > tpm {
            // The earliest moment enough old requests have expired.
            for index in 0..state.recent.len() {
                used -= state.recent[index].1;
                if used + tokens <= tpm {
                    return Decision::WaitFor(expiry(index));
                }
            }
        }
    }
    Decision::Go
}

/// At most `max` requests in flight at once, whoever asks: the reviews of
/// a batch and the parts of one review share them, so `--concurrency N`
/// means N model calls at a time however the work is split. A slot is held
/// only around one request, never while waiting for other work, so the
/// holders cannot wait on each other.
pub struct Slots {
    max: usize,
    used: Mutex<usize>,
    freed: Condvar,
}

/// A request slot; dropping it frees the slot.
pub struct Slot<'s> {
    slots: &'s Slots,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut used = self.slots.lock();
        *used = used.saturating_sub(1);
        drop(used);
        self.slots.freed.notify_one();
    }
}

impl Slots {
    /// `max` of 0 is taken as 1: a run must be able to ask.
    pub fn new(max: usize) -> Slots {
        Slots {
            max: max.max(1),
            used: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Blocks until a slot is free.
    pub fn acquire(&self) -> Slot<'_> {
        let mut used = self.lock();
        while *used >= self.max {
            used = self
                .freed
                .wait(used)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *used += 1;
        Slot { slots: self }
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        self.used.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A clock that only moves when someone sleeps on it.
    struct FakeClock {
        start: Instant,
        elapsed: Mutex<Duration>,
    }

    impl Clock for Arc<FakeClock> {
        fn now(&self) -> Instant {
            self.start + *self.elapsed.lock().unwrap()
        }

        fn sleep(&self, duration: Duration) {
            *self.elapsed.lock().unwrap() += duration;
        }
    }

    fn fake() -> Arc<FakeClock> {
        Arc::new(FakeClock {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
        })
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn requests_per_minute_wait_for_the_oldest_to_leave_the_window() {
        let clock = fake();
        let pacer = Pacer::with_clock(Some(2), None, Box::new(Arc::clone(&clock)));
        let waits = Mutex::new(Vec::new());
        let record = |d: Duration| waits.lock().unwrap().push(d);
        drop(pacer.acquire(1, &record));
        clock.sleep(secs(10));
        drop(pacer.acquire(1, &record));
        assert!(waits.lock().unwrap().is_empty());
        drop(pacer.acquire(1, &record));
        // The first request started at 0 s and leaves the window at 60 s.
        assert_eq!(*waits.lock().unwrap(), [secs(50)]);
        assert_eq!(clock.now() - clock.start, secs(60));
    }

    #[test]
    fn tokens_per_minute_wait_until_enough_tokens_expire() {
        let clock = fake();
        let pacer = Pacer::with_clock(None, Some(1000), Box::new(Arc::clone(&clock)));
        let waits = Mutex::new(Vec::new());
        let record = |d: Duration| waits.lock().unwrap().push(d);
        drop(pacer.acquire(400, &record)); // t = 0
        clock.sleep(secs(20));
        drop(pacer.acquire(400, &record)); // t = 20
        clock.sleep(secs(10));
        // 800 used; 300 more needs the 0 s request to leave, at 60 s.
        drop(pacer.acquire(300, &record));
        assert_eq!(*waits.lock().unwrap(), [secs(30)]);
        // Now 400 (t=20) + 300 (t=60) used; 700 needs both earlier gone: t=80 is
        // enough for 300 + 700 = 1000.
        drop(pacer.acquire(700, &record));
        assert_eq!(*waits.lock().unwrap(), [secs(30), secs(20)]);
        assert_eq!(clock.now() - clock.start, secs(80));
    }

    #[test]
    fn no_limits_never_wait() {
        let clock = fake();
        let pacer = Pacer::with_clock(None, Some(0), Box::new(Arc::clone(&clock)));
        let never = |d: Duration| panic!("waited {d:?}");
        let permits: Vec<Permit> = (0..100).map(|_| pacer.acquire(1_000_000, &never)).collect();
        assert_eq!(permits.len(), 100);
        assert_eq!(clock.now(), clock.start);
    }

    #[test]
    fn an_oversized_request_goes_alone_once_nothing_is_in_flight() {
        let clock = fake();
        let pacer = Pacer::with_clock(None, Some(1000), Box::new(Arc::clone(&clock)));
        let never = |d: Duration| panic!("waited {d:?}");
        let running = pacer.acquire(100, &never);
        let (done, finished) = mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let permit = pacer.acquire(5000, &never);
                done.send(()).unwrap();
                drop(permit);
            });
            assert!(
                finished.recv_timeout(Duration::from_millis(100)).is_err(),
                "the oversized request must wait for the running one"
            );
            drop(running);
            finished
                .recv_timeout(secs(5))
                .expect("released after the running request ended");
        });
    }

    #[test]
    fn an_oversized_request_with_nothing_in_flight_does_not_wait_forever() {
        let clock = fake();
        let pacer = Pacer::with_clock(None, Some(1000), Box::new(Arc::clone(&clock)));
        let never = |d: Duration| panic!("waited {d:?}");
        drop(pacer.acquire(900, &never));
        drop(pacer.acquire(5000, &never));
        assert_eq!(clock.now(), clock.start);
    }

    #[test]
    fn decisions_for_a_full_window() {
        let now = Instant::now();
        let mut state = State {
            recent: VecDeque::from([
                (now - secs(59), 10),
                (now - secs(30), 10),
                (now - secs(1), 10),
            ]),
            in_flight: 0,
        };
        assert_eq!(
            decide(&mut state, Some(3), None, 1, now),
            Decision::WaitFor(secs(1))
        );
        assert_eq!(
            decide(&mut state, Some(2), None, 1, now),
            Decision::WaitFor(secs(30))
        );
        assert_eq!(
            decide(&mut state, Some(4), Some(30), 1, now),
            Decision::WaitFor(secs(1))
        );
        assert_eq!(decide(&mut state, Some(4), Some(31), 1, now), Decision::Go);
        // Requests a minute old no longer count.
        assert_eq!(
            decide(&mut state, Some(3), None, 1, now + secs(1)),
            Decision::Go
        );
        assert_eq!(state.recent.len(), 2);
    }

    #[test]
    fn slots_hold_the_requests_in_flight_to_their_number() {
        let slots = Slots::new(2);
        let in_flight = std::sync::atomic::AtomicUsize::new(0);
        let most = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    let _slot = slots.acquire();
                    let now = in_flight.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    in_flight.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                });
            }
        });
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(*slots.lock(), 0);
    }
}
