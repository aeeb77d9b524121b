//! What model calls cost, at the prices `[llm]` configures: one function,
//! `cost`, that every report, log line and statistic prices tokens with, so
//! they agree. Input read from the provider's prompt cache is charged less
//! (`cache_read_discount`), and an answer from a provider's batch API less
//! again (`batch_discount`, on input and output alike; the two discounts
//! stack, as both providers bill them). Input written to the cache is
//! charged as input: Anthropic bills it somewhat above, which speed does
//! not model.
//!
//! Prices are in whatever currency they are given in; speed never converts.

use serde::{Deserialize, Serialize};

use super::{Choice, Config, ProviderKind};

/// What the providers take off for cached input and for batches, when the
/// configuration does not say: Anthropic bills a cache read at a tenth of
/// the input price, OpenAI at half; both halve a batch's prices.
const ANTHROPIC_CACHE_READ_DISCOUNT: f64 = 0.9;
const OPENAI_CACHE_READ_DISCOUNT: f64 = 0.5;
const BATCH_DISCOUNT: f64 = 0.5;

/// The prices of one provider and model, per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// 0 to 1: the fraction taken off the input price for cached input.
    pub cache_read_discount: f64,
    /// 0 to 1: the fraction taken off every price for a batch's answer.
    pub batch_discount: f64,
}

impl Prices {
    /// The prices `config` sets; None unless both `price_input_per_mtok`
    /// and `price_output_per_mtok` are set (a cost with one of them missing
    /// would be a wrong figure, not a partial one).
    pub fn of(config: &Config) -> Option<Prices> {
        let (Some(input), Some(output)) =
            (config.price_input_per_mtok, config.price_output_per_mtok)
        else {
            return None;
        };
        let usual_cache = match config.provider {
            Choice::Model(ProviderKind::Anthropic) => ANTHROPIC_CACHE_READ_DISCOUNT,
            Choice::Model(ProviderKind::OpenAi) => OPENAI_CACHE_READ_DISCOUNT,
            _ => 0.0,
        };
        Some(Prices {
            input_per_mtok: input,
            output_per_mtok: output,
            cache_read_discount: fraction(config.cache_read_discount.unwrap_or(usual_cache)),
            batch_discount: fraction(config.batch_discount.unwrap_or(BATCH_DISCOUNT)),
        })
    }
}

/// The tokens of one call, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Every input token, cached ones included.
    pub input: u64,
    pub output: u64,
    /// The part of `input` read from the prompt cache.
    pub cache_read: u64,
    /// The part of `input` written to the prompt cache.
    pub cache_write: u64,
    /// Answered by a provider's batch API.
    pub batch: bool,
}

/// A cost, in the prices' currency.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    pub total: f64,
}

impl Cost {
    /// The sum of two costs.
    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            input: self.input + other.input,
            output: self.output + other.output,
            total: self.total + other.total,
        }
    }

    /// Rounded to a millionth, for reports and log lines: finer figures are
    /// noise from adding floating-point fractions.
    pub fn rounded(self) -> Cost {
        let round = |x: f64| (x * 1e6).round() / 1e6;
        Cost {
            input: round(self.input),
            output: round(self.output),
            total: round(self.input) + round(self.output),
        }
    }
}

/// What `usage` costs at `prices`.
pub fn cost(usage: &Usage, prices: &Prices) -> Cost {
    // A provider cannot read more from its cache than it was sent.
    let cached = usage.cache_read.min(usage.input);
    let fresh = usage.input - cached;
    let batch = if usage.batch {
        1.0 - prices.batch_discount
    } else {
        1.0
    };
    let per_token = |per_mtok: f64| per_mtok / 1_000_000.0 * batch;
    let input = fresh as f64 * per_token(prices.input_per_mtok)
        + cached as f64 * per_token(prices.input_per_mtok) * (1.0 - prices.cache_read_discount);
    let output = usage.output as f64 * per_token(prices.output_per_mtok);
    Cost {
        input,
        output,
        total: input + output,
    }
}

/// A discount outside 0 to 1 (the configuration checks the range) would
/// make a negative or inflated price; clamped all the same.
fn fraction(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices() -> Prices {
        Prices {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cache_read_discount: 0.9,
            batch_discount: 0.5,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_plain_call_costs_its_tokens_at_the_prices() {
        let usage = Usage {
            input: 1_000_000,
            output: 100_000,
            ..Usage::default()
        };
        let c = cost(&usage, &prices());
        assert!(close(c.input, 3.0) && close(c.output, 1.5) && close(c.total, 4.5));
    }

    #[test]
    fn cached_input_is_discounted_and_a_batch_halves_everything() {
        let usage = Usage {
            input: 1_000_000,
            output: 0,
            cache_read: 800_000,
            cache_write: 0,
            batch: false,
        };
        // 200k fresh at 3.0 and 800k cached at 0.3 per million.
        assert!(close(cost(&usage, &prices()).input, 0.6 + 0.24));
        let batched = Usage {
            batch: true,
            output: 1_000_000,
            ..usage
        };
        let c = cost(&batched, &prices());
        assert!(close(c.input, 0.42), "{c:?}");
        assert!(close(c.output, 7.5), "{c:?}");
    }

    #[test]
    fn a_cache_read_larger_than_the_input_is_capped() {
        let usage = Usage {
            input: 100,
            cache_read: 1_000_000,
            ..Usage::default()
        };
        assert!(close(
            cost(&usage, &prices()).input,
            100.0 * 0.3 / 1_000_000.0
        ));
    }

    #[test]
    fn prices_need_both_figures_and_discounts_follow_the_provider() {
        let mut config = Config {
            provider: Choice::Model(ProviderKind::Anthropic),
            price_input_per_mtok: Some(3.0),
            ..Config::default()
        };
        assert_eq!(Prices::of(&config), None);
        config.price_output_per_mtok = Some(15.0);
        let p = Prices::of(&config).unwrap();
        assert_eq!((p.cache_read_discount, p.batch_discount), (0.9, 0.5));
        config.provider = Choice::Model(ProviderKind::OpenAi);
        assert_eq!(Prices::of(&config).unwrap().cache_read_discount, 0.5);
        config.cache_read_discount = Some(0.25);
        config.batch_discount = Some(7.0);
        let p = Prices::of(&config).unwrap();
        assert_eq!((p.cache_read_discount, p.batch_discount), (0.25, 1.0));
    }

    #[test]
    fn rounding_keeps_millionths_and_the_total_adds_up() {
        let c = Cost {
            input: 0.123_456_78,
            output: 0.000_000_4,
            total: 0.0,
        }
        .rounded();
        assert_eq!(c.input, 0.123_457);
        assert_eq!(c.output, 0.0);
        assert_eq!(c.total, 0.123_457);
    }
}
