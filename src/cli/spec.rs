//! The clap types of `speed spec …`: the spec review loop.

use clap::builder::RangedI64ValueParser;
use clap::{Args, Subcommand, ValueEnum};

use super::limits;

#[derive(Debug, Args)]
pub struct SpecArgs {
    #[command(subcommand)]
    pub action: SpecAction,
}

#[derive(Debug, Subcommand)]
pub enum SpecAction {
    /// Review a draft spec against its PRD before anyone implements it.
    ///
    /// speed's own checks run first (the PRD's requirements traced to the
    /// spec's sections, empty sections, duplicated headings, TODO/TBD/???
    /// markers, untestable requirement lists); then a model scores the spec
    /// on the configured criteria ([spec_review]). With a reviser command, a
    /// spec that needs revision is revised in the working tree and reviewed
    /// again, up to spec_review.max_iterations; then the session is blocked
    /// until a person acts (--resume). The session is kept in
    /// .speed/spec-reviews/FEATURE.json. Exit codes: 0 pass, 1 error, 2
    /// usage, 50 needs revision, 51 blocked, 52 model unreachable, 53 model
    /// output invalid.
    Review(Box<SpecReviewArgs>),
}

/// How `speed spec review` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SpecFormat {
    /// For people (the default).
    Human,
    /// One JSON object.
    Json,
    /// SARIF 2.1.0, for code scanning: speed's checks and the model's
    /// feedback, each at its place in the spec (or the PRD).
    Sarif,
    /// JUnit XML: one test case, failed when the spec needs revision.
    Junit,
    /// GitHub Actions workflow commands (annotations), and a summary in
    /// $GITHUB_STEP_SUMMARY when it is set.
    Github,
}

impl From<SpecFormat> for crate::render::Format {
    fn from(format: SpecFormat) -> crate::render::Format {
        use crate::render::Format;
        match format {
            SpecFormat::Human => Format::Human,
            SpecFormat::Json => Format::Json,
            SpecFormat::Sarif => Format::Sarif,
            SpecFormat::Junit => Format::Junit,
            SpecFormat::Github => Format::Github,
        }
    }
}

#[derive(Debug, Args)]
pub struct SpecReviewArgs {
    /// The feature whose spec to review (its spec_path, else
    /// specs/product/FEATURE.md); it names the session [default: the one
    /// .speed/active_feature names, without --spec].
    #[arg(value_name = "FEATURE")]
    pub feature: Option<String>,

    /// The spec to review; without FEATURE, its file name names the
    /// session. Relative to the directory speed runs in, else to the
    /// repository root.
    #[arg(long, value_name = "PATH")]
    pub spec: Option<String>,

    /// The PRD the spec must cover [default: the feature's prd.md under
    /// .speed/features/ or .speed/shared/features/, when there is one].
    #[arg(long, value_name = "PATH")]
    pub prd: Option<String>,

    /// Review the spec and the PRD as committed at this revision instead
    /// of the working tree; nothing is revised then.
    #[arg(long, value_name = "REF")]
    pub rev: Option<String>,

    /// Reviews a session may have without a pass before it is blocked
    /// [default: spec_review.max_iterations, else 3].
    #[arg(long, value_name = "N",
          value_parser = RangedI64ValueParser::<u32>::new().range(limits::MAX_ITERATIONS))]
    pub max_iterations: Option<u32>,

    /// Continue a blocked session with a fresh budget of reviews (after a
    /// person edited the spec, or fixed the model or the reviser).
    #[arg(long)]
    pub resume: bool,

    /// speed's own checks alone: no model is asked, nothing is written.
    #[arg(long)]
    pub offline: bool,

    /// Print the prompt the next review would send and its token count;
    /// ask nothing, write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Output format on stdout: human, json, or for CI sarif, junit or
    /// github (a dry run: human or json).
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    pub format: SpecFormat,

    /// The reviser command and its arguments, run without a shell: it reads
    /// the spec, the PRD and the feedback on stdin and writes the revised
    /// spec on stdout [default: spec_review.reviser]. It takes the rest of
    /// the command line, so give it last.
    #[arg(long, value_name = "CMD", num_args = 1.., allow_hyphen_values = true,
          conflicts_with = "rev")]
    pub reviser: Vec<String>,
}
