//! The model of a collected review: a provider that answers the first
//! question of each part with what the batch answered to that very prompt,
//! and sends everything else (a corrective retry, a question the batch left
//! unanswered because it errored or expired) to the configured model
//! directly. So a collected review runs through `run::review` like any
//! other: the same checks, the same decision, the same records.
//!
//! A first question the batch was never asked (the prompt is not the one
//! submitted: the spec, the configuration or the task changed since) is an
//! error, not a synchronous call: an answer is used only for the question
//! it answers, and a changed question is the user's to review again.

use std::collections::HashMap;
use std::sync::Arc;

use crate::llm::batch::Answer;
use crate::llm::{self, Completion, Provider, Request, Role};

pub struct Answering {
    inner: Arc<dyn Provider>,
    batch: String,
    /// By `sha256:` of the prompt the request carried.
    answers: HashMap<String, Answer>,
}

impl Answering {
    pub fn new(inner: Arc<dyn Provider>, batch: &str, answers: HashMap<String, Answer>) -> Self {
        Answering {
            inner,
            batch: batch.to_string(),
            answers,
        }
    }
}

impl Provider for Answering {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn complete(&self, request: &Request) -> Result<Completion, llm::Error> {
        // One user message: a part's first question, as the batch had it.
        let first = match request.messages.as_slice() {
            [first] if first.role == Role::User => Some(first),
            _ => None,
        };
        if let Some(first) = first {
            match self
                .answers
                .get(&crate::digest::sha256_text(&first.content))
            {
                Some(Answer::Answered(answer)) => return answer.clone(),
                // Errored or expired in the batch: asked directly.
                Some(Answer::Unanswered(_)) => {}
                None => {
                    return Err(llm::Error::Batch {
                        what: format!(
                            "the prompt is not the one submitted in batch {}: the spec, the configuration or the task changed since, so its answer is not used; review the task again",
                            self.batch
                        ),
                    });
                }
            }
        }
        self.inner.complete(request)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::llm::Message;

    struct Direct(Mutex<usize>);

    impl Provider for Direct {
        fn name(&self) -> &str {
            "anthropic"
        }
        fn model(&self) -> &str {
            "m"
        }
        fn complete(&self, _: &Request) -> Result<Completion, llm::Error> {
            *self.0.lock().unwrap() += 1;
            Ok(Completion {
                text: "direct".into(),
                ..Completion::default()
            })
        }
    }

    fn ask(provider: &Answering, messages: Vec<Message>) -> Result<String, llm::Error> {
        provider
            .complete(&Request {
                messages,
                ..Request::default()
            })
            .map(|c| c.text)
    }

    #[test]
    fn the_batch_answers_its_prompts_and_the_model_the_rest() {
        let direct = Arc::new(Direct(Mutex::new(0)));
        let mut answers = HashMap::new();
        answers.insert(
            crate::digest::sha256_text("part one"),
            Answer::Answered(Ok(Completion {
                text: "batched".into(),
                batch: Some("b".into()),
                ..Completion::default()
            })),
        );
        answers.insert(
            crate::digest::sha256_text("part two"),
            Answer::Unanswered("expired".into()),
        );
        let provider = Answering::new(direct.clone(), "b", answers);
        assert_eq!(
            ask(&provider, vec![Message::user("part one")]).unwrap(),
            "batched"
        );
        assert_eq!(*direct.0.lock().unwrap(), 0);
        assert_eq!(
            ask(&provider, vec![Message::user("part two")]).unwrap(),
            "direct"
        );
        // A corrective retry is a conversation: asked directly.
        let retry = vec![
            Message::user("part one"),
            Message::assistant("{"),
            Message::user("again"),
        ];
        assert_eq!(ask(&provider, retry).unwrap(), "direct");
        assert_eq!(*direct.0.lock().unwrap(), 2);
        let err = ask(&provider, vec![Message::user("a changed prompt")]).unwrap_err();
        assert!(
            err.to_string().contains("not the one submitted in batch b"),
            "{err}"
        );
        assert_eq!(err.kind(), llm::ErrorKind::Config);
        assert_eq!(*direct.0.lock().unwrap(), 2);
    }
}
