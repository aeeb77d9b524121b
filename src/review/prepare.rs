//! Everything a review does before the model is asked, in two steps: `read`
//! (the subject's secrets replaced, its branch and diff resolved, an empty
//! diff being a value, the sources read), which writes nothing and so
//! comes before the lock, and `prepare` (the facts established and the
//! prompts composed), the costly stages, which a review runs under its
//! lock. A dry run stops after them; a review goes on to ask and decide.

use crate::git::Repository;
use crate::secrets::{self, DiffSecret, Redaction};
use crate::work::{self, Resolved, Subject};

use super::Error;
use super::compose::{self, Composed};
use super::context::Context;
use super::facts::{self, Facts};
use super::redact;
use super::sources::{self, Sources};

/// A review ready for the model: every stage's result.
pub struct Prepared {
    /// The subject, its secrets replaced.
    pub subject: Subject,
    pub resolved: Resolved,
    pub sources: Sources,
    pub facts: Facts,
    /// What the reviewer must know: the sources' notices, then the facts'.
    pub notices: Vec<String>,
    pub composed: Composed,
    /// A re-review: the last review's findings and what changed since.
    pub previous: Option<super::previous::Rereview>,
}

/// The subject with what it is judged against, read and checked before
/// anything is locked or written: a review whose input is wrong (a branch
/// that does not exist, a spec that is not there) writes nothing.
pub struct Inputs {
    /// The subject, its secrets replaced.
    pub subject: Subject,
    pub resolved: Resolved,
    pub sources: Sources,
    subject_secrets: Vec<Redaction>,
    diff_secrets: Vec<DiffSecret>,
}

/// What reading the inputs found.
pub enum Read {
    Inputs(Box<Inputs>),
    /// The branch does not differ from its base: nothing was implemented,
    /// which is decided without a model.
    NothingImplemented(Box<Empty>),
}

/// A subject whose branch holds no change.
pub struct Empty {
    pub subject: Subject,
    pub resolved: Resolved,
}

/// The first stages: the subject's secrets replaced, its branch and diff
/// resolved (an empty diff is a value), its sources read.
pub fn read(ctx: &Context, subject: Subject) -> Result<Read, Error> {
    let repo = Repository::open(&ctx.root)?;
    // Secrets are replaced where they are read, so nothing later sees them.
    let mut subject = subject;
    let subject_secrets = redact::subject(&mut subject, &ctx.root);
    let mut resolved = work::resolve(&repo, ctx.main(), &subject)?;
    let diff_secrets = secrets::redact_diff(&mut resolved.diff);
    if resolved.diff.is_empty() {
        return Ok(Read::NothingImplemented(Box::new(Empty {
            subject,
            resolved,
        })));
    }
    let sources = sources::load(ctx, &repo, &subject, &resolved)?;
    Ok(Read::Inputs(Box::new(Inputs {
        subject,
        resolved,
        sources,
        subject_secrets,
        diff_secrets,
    })))
}

/// The stages that cost: the facts established (blast radius, checks and
/// their commands) and the prompts composed.
pub fn prepare(ctx: &Context, inputs: Inputs) -> Result<Prepared, Error> {
    let Inputs {
        subject,
        resolved,
        sources,
        subject_secrets,
        diff_secrets,
    } = inputs;
    let repo = Repository::open(&ctx.root)?;
    let facts = facts::establish(
        ctx,
        &repo,
        &subject,
        &resolved,
        &sources,
        subject_secrets,
        &diff_secrets,
    )?;
    let mut notices = sources.notices.clone();
    notices.extend(facts.notices.iter().cloned());
    let (mut previous, said) = super::previous::find(ctx, &repo, &subject, &resolved);
    notices.extend(said);
    let inputs = compose::Inputs {
        subject: &subject,
        resolved: &resolved,
        sources: &sources,
        facts: &facts,
        notices: &notices,
    };
    let mut composed = compose::compose(ctx, &inputs, previous.as_ref())?;
    if let Some(rereview) = previous.as_mut() {
        if let Some(incremental) = compose::incremental(ctx, &inputs, rereview, &composed) {
            notices.push(incremental.notice);
            composed = incremental.composed;
        }
    }
    Ok(Prepared {
        subject,
        resolved,
        sources,
        facts,
        notices,
        composed,
        previous,
    })
}
