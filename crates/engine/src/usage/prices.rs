//! The price table: built-in defaults for the presets' well-known models, the user's own
//! prices over them, and what a call costs.
//!
//! A price names a model; it prices that model, its dated or suffixed versions
//! (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`) and the same name behind a
//! router's prefix (`openai/gpt-4o`). The longest matching name wins, so `gpt-4o-mini`
//! keeps its own price although `gpt-4o` also matches.

use protocol::usage::{ModelPrice, PriceSource};
use store::usage::{StoredPrice, Tokens};

/// USD per million tokens: input, cached input, output. Published list prices of the
/// presets' providers (standard tier, short prompts) when this table was written; the user
/// can change any of them in Settings → Usage.
const DEFAULTS: &[(&str, f64, f64, f64)] = &[
    // OpenAI
    ("gpt-5", 1.25, 0.125, 10.0),
    ("gpt-5-mini", 0.25, 0.025, 2.0),
    ("gpt-5-nano", 0.05, 0.005, 0.4),
    ("gpt-4.1", 2.0, 0.5, 8.0),
    ("gpt-4.1-mini", 0.4, 0.1, 1.6),
    ("gpt-4.1-nano", 0.1, 0.025, 0.4),
    ("gpt-4o", 2.5, 1.25, 10.0),
    ("gpt-4o-mini", 0.15, 0.075, 0.6),
    ("o3", 2.0, 0.5, 8.0),
    ("o3-mini", 1.1, 0.55, 4.4),
    ("o3-pro", 20.0, 20.0, 80.0),
    ("o4-mini", 1.1, 0.275, 4.4),
    // Anthropic
    ("claude-opus-4", 15.0, 1.5, 75.0),
    ("claude-opus-4-1", 15.0, 1.5, 75.0),
    ("claude-opus-4-5", 5.0, 0.5, 25.0),
    ("claude-sonnet-4", 3.0, 0.3, 15.0),
    ("claude-sonnet-4-5", 3.0, 0.3, 15.0),
    ("claude-3-7-sonnet", 3.0, 0.3, 15.0),
    ("claude-haiku-4-5", 1.0, 0.1, 5.0),
    ("claude-3-5-haiku", 0.8, 0.08, 4.0),
    // Google Gemini
    ("gemini-2.5-pro", 1.25, 0.125, 10.0),
    ("gemini-2.5-flash", 0.3, 0.03, 2.5),
    ("gemini-2.5-flash-lite", 0.1, 0.01, 0.4),
    ("gemini-2.0-flash", 0.1, 0.025, 0.4),
    // DeepSeek
    ("deepseek-chat", 0.28, 0.028, 0.42),
    ("deepseek-reasoner", 0.28, 0.028, 0.42),
];

/// The prices in effect: defaults, with the user's prices over them.
#[derive(Clone, Debug, Default)]
pub(crate) struct PriceTable {
    prices: Vec<ModelPrice>,
}

impl PriceTable {
    pub(crate) fn new(custom: Vec<StoredPrice>) -> Self {
        let mut prices: Vec<ModelPrice> = DEFAULTS
            .iter()
            .filter(|(model, ..)| !custom.iter().any(|c| c.model == *model))
            .map(|&(model, input, cached, output)| ModelPrice {
                model: model.to_owned(),
                input_usd: input,
                output_usd: output,
                cached_input_usd: Some(cached),
                source: PriceSource::Default,
            })
            .collect();
        prices.extend(custom.into_iter().map(|c| ModelPrice {
            model: c.model,
            input_usd: c.input_usd,
            output_usd: c.output_usd,
            cached_input_usd: c.cached_input_usd,
            source: PriceSource::Custom,
        }));
        prices.sort_by(|a, b| a.model.cmp(&b.model));
        Self { prices }
    }

    pub(crate) fn into_list(self) -> Vec<ModelPrice> {
        self.prices
    }

    /// The price of `model`, if any applies.
    pub(crate) fn price_of(&self, model: &str) -> Option<&ModelPrice> {
        // A router's prefix (`openai/gpt-4o`) is not part of the model's name.
        let name = model.rsplit('/').next().unwrap_or(model).trim();
        let name = name.to_ascii_lowercase();
        self.prices
            .iter()
            .filter(|p| {
                let key = p.model.to_ascii_lowercase();
                name == key || name.strip_prefix(&key).is_some_and(|rest| rest.starts_with(['-', ':', '@', '.', '_']))
            })
            .max_by_key(|p| p.model.len())
    }

    /// What these tokens of `model` cost in USD; `None` when the model has no price.
    pub(crate) fn cost(&self, model: &str, tokens: &Tokens) -> Option<f64> {
        self.price_of(model).map(|price| cost(price, tokens))
    }
}

fn cost(price: &ModelPrice, tokens: &Tokens) -> f64 {
    let cached = tokens.cached.min(tokens.input);
    let uncached = tokens.input - cached;
    let per_million = uncached as f64 * price.input_usd
        + cached as f64 * price.cached_input_usd.unwrap_or(price.input_usd)
        + tokens.output as f64 * price.output_usd;
    per_million / 1_000_000.0
}

/// Checks a price the user typed: a model name, and finite non-negative prices no larger
/// than any real one could be.
pub(crate) fn check(input: &protocol::usage::ModelPriceInput) -> Result<StoredPrice, protocol::ApiError> {
    use protocol::ApiError;
    let model = input.model.trim();
    if model.is_empty() || model.len() > 200 {
        return Err(ApiError::bad_request("model", "name the model the price is for (at most 200 characters)"));
    }
    let valid = |field: &str, value: f64| {
        if value.is_finite() && (0.0..=10_000.0).contains(&value) {
            Ok(value)
        } else {
            Err(ApiError::bad_request(
                field,
                format!("a price is US dollars per million tokens, from 0 to 10000 (got {value})"),
            ))
        }
    };
    Ok(StoredPrice {
        model: model.to_owned(),
        input_usd: valid("inputUsd", input.input_usd)?,
        output_usd: valid("outputUsd", input.output_usd)?,
        cached_input_usd: input.cached_input_usd.map(|c| valid("cachedInputUsd", c)).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, cached: u64, output: u64) -> Tokens {
        Tokens { input, output, reasoning: 0, cached }
    }

    #[test]
    fn versions_and_router_prefixes_get_their_models_price_and_the_longest_name_wins() {
        let table = PriceTable::new(Vec::new());
        assert_eq!(table.price_of("gpt-4o-2024-08-06").map(|p| p.model.as_str()), Some("gpt-4o"));
        assert_eq!(table.price_of("gpt-4o-mini-2024-07-18").map(|p| p.model.as_str()), Some("gpt-4o-mini"));
        assert_eq!(table.price_of("openai/gpt-4o").map(|p| p.model.as_str()), Some("gpt-4o"));
        assert_eq!(table.price_of("claude-sonnet-4-5-20250929").map(|p| p.model.as_str()), Some("claude-sonnet-4-5"));
        assert_eq!(table.price_of("o3-mini").map(|p| p.model.as_str()), Some("o3-mini"));
        // A name that merely starts with a priced one is another model.
        assert_eq!(table.price_of("gpt-4omega"), None);
        assert_eq!(table.price_of("llama3.1:8b"), None);
    }

    #[test]
    fn cost_counts_cached_input_at_its_own_price_and_reasoning_as_output() {
        let table = PriceTable::new(Vec::new());
        // gpt-4o: 2.50 in, 1.25 cached, 10 out per million.
        let cost = table.cost("gpt-4o", &tokens(1_000_000, 400_000, 100_000)).unwrap();
        assert!((cost - (0.6 * 2.5 + 0.4 * 1.25 + 0.1 * 10.0)).abs() < 1e-9, "{cost}");
        assert_eq!(table.cost("my-local-model", &tokens(10, 0, 10)), None);
    }

    #[test]
    fn the_users_price_replaces_the_default_and_prices_new_models() {
        let custom = vec![
            StoredPrice { model: "gpt-4o".into(), input_usd: 1.0, output_usd: 2.0, cached_input_usd: None },
            StoredPrice { model: "scripted".into(), input_usd: 3.0, output_usd: 6.0, cached_input_usd: None },
        ];
        let table = PriceTable::new(custom);
        let gpt = table.price_of("gpt-4o").unwrap();
        assert_eq!((gpt.input_usd, gpt.source), (1.0, PriceSource::Custom));
        // Without a cached price, cached tokens cost the input price.
        let cost = table.cost("scripted", &tokens(1_000_000, 500_000, 1_000_000)).unwrap();
        assert!((cost - 9.0).abs() < 1e-9);
        assert_eq!(table.clone().into_list().iter().filter(|p| p.model == "gpt-4o").count(), 1);
    }

    #[test]
    fn prices_typed_by_the_user_are_checked() {
        use protocol::usage::ModelPriceInput;
        let input = |model: &str, price: f64| ModelPriceInput {
            model: model.into(),
            input_usd: price,
            output_usd: 1.0,
            cached_input_usd: None,
        };
        assert!(check(&input(" m ", 0.0)).is_ok_and(|p| p.model == "m"));
        for bad in [input("", 1.0), input("m", -1.0), input("m", f64::NAN), input("m", f64::INFINITY)] {
            assert_eq!(check(&bad).unwrap_err().kind, protocol::ErrorKind::BadRequest);
        }
    }
}
