//! How fast the demo moves: pauses between steps, so a person can follow it in the control
//! room, and one stop signal that ends every pause (quitting the control room, Ctrl-C).

use std::time::Duration;

use tokio::sync::watch;

/// The pause per step at `--speed 1` with the control room.
pub const STEP_AT_SPEED_1: Duration = Duration::from_millis(1500);

/// The demo was told to stop (or whoever could tell it is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// The demo's speed: how long one step's pause is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    unit: Duration,
}

impl Pace {
    /// `speed` scales [`STEP_AT_SPEED_1`]; without it the control room gets speed 1 and
    /// `--headless` no pauses at all.
    pub fn new(headless: bool, speed: Option<f64>) -> Pace {
        let unit = match speed {
            Some(speed) if speed.is_finite() && speed > 0.0 => {
                Duration::try_from_secs_f64(STEP_AT_SPEED_1.as_secs_f64() / speed).unwrap_or(Duration::MAX)
            }
            _ if headless => Duration::ZERO,
            _ => STEP_AT_SPEED_1,
        };
        Pace { unit }
    }

    /// The pause of one step (zero for `--headless` without `--speed`).
    pub fn unit(&self) -> Duration {
        self.unit
    }

    /// Waits `units` steps, or returns `Stopped` as soon as the stop signal is raised.
    pub async fn pause(&self, units: f64, stop: &mut watch::Receiver<bool>) -> Result<(), Stopped> {
        if *stop.borrow() {
            return Err(Stopped);
        }
        let length = Duration::try_from_secs_f64(self.unit.as_secs_f64() * units.max(0.0)).unwrap_or(Duration::MAX);
        if length.is_zero() {
            tokio::task::yield_now().await;
            return Ok(());
        }
        tokio::select! {
            _ = tokio::time::sleep(length) => Ok(()),
            _ = stop.wait_for(|stopped| *stopped) => Err(Stopped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_scales_the_step_and_headless_defaults_to_no_pause() {
        assert_eq!(Pace::new(true, None).unit(), Duration::ZERO);
        assert_eq!(Pace::new(false, None).unit(), STEP_AT_SPEED_1);
        assert_eq!(Pace::new(false, Some(4.0)).unit(), STEP_AT_SPEED_1 / 4);
        assert_eq!(Pace::new(true, Some(2.0)).unit(), STEP_AT_SPEED_1 / 2);
        // Nonsense speeds fall back to the default (the CLI refuses them before this).
        assert_eq!(Pace::new(false, Some(f64::NAN)).unit(), STEP_AT_SPEED_1);
    }

    #[tokio::test]
    async fn a_stop_ends_a_long_pause() {
        let pace = Pace::new(false, Some(0.001));
        let (tx, mut rx) = watch::channel(false);
        let waiter = tokio::spawn(async move { pace.pause(1.0, &mut rx).await });
        tx.send(true).unwrap();
        assert_eq!(waiter.await.unwrap(), Err(Stopped));
    }
}
