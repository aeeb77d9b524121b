//! Which attributes and decorators keep a test from running: Rust's
//! `#[ignore]`, Python's `skip`, `skipif`, `xfail` and unittest's
//! `skip*` and `expectedFailure`; and whether a skip holds only under a
//! condition (a test skipped on one platform runs on the others).

/// Whether a Rust attribute (without `#[…]`) ignores its test. Behind a
/// condition (`cfg_attr(miri, ignore)`) it does not: the test runs where
/// tests normally run.
pub fn rust(attr: &str) -> bool {
    attr == "ignore" || attr.starts_with("ignore ") || attr.starts_with("ignore=")
}

/// Whether a decorator makes a test skipped, and if so whether only
/// under a condition: `skipif(…)`, `skipUnless(…)`, `xfail(cond, …)`.
pub fn python(decorator: &str) -> Option<bool> {
    let d = decorator.trim_start_matches('@').trim();
    let (path, args) = d.split_once('(').unwrap_or((d, ""));
    let path = path.trim();
    if !is_skip(path) {
        return None;
    }
    let last = path.rsplit('.').next().unwrap_or(path);
    Some(match last {
        "skipif" | "skipIf" | "skipUnless" => true,
        "xfail" => xfail_conditional(args),
        _ => false,
    })
}

/// `xfail(reason=…)` holds always; `xfail(sys.platform == "win32")`
/// and `xfail(condition=…)` only there.
fn xfail_conditional(args: &str) -> bool {
    let first = args.trim_start();
    if first.is_empty() || first.starts_with(')') {
        return false;
    }
    match first.split_once('=') {
        Some((key, value))
            if !value.starts_with('=')
                && key.trim().chars().all(|c| c.is_alphanumeric() || c == '_') =>
        {
            key.trim() == "condition"
        }
        _ => true,
    }
}

fn is_skip(path: &str) -> bool {
    matches!(
        path,
        "pytest.mark.skip"
            | "pytest.mark.skipif"
            | "pytest.mark.xfail"
            | "mark.skip"
            | "mark.skipif"
            | "mark.xfail"
            | "unittest.skip"
            | "unittest.skipIf"
            | "unittest.skipUnless"
            | "unittest.expectedFailure"
            | "skip"
            | "skipIf"
            | "skipUnless"
            | "expectedFailure"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_and_their_conditions() {
        assert_eq!(python("@pytest.mark.skip(reason=\"x\")"), Some(false));
        assert_eq!(python("@unittest.skip(\"x\")"), Some(false));
        assert_eq!(
            python("@pytest.mark.skipif(sys.platform == \"win32\")"),
            Some(true)
        );
        assert_eq!(python("@unittest.skipUnless(HAS_X, \"x\")"), Some(true));
        assert_eq!(python("@pytest.mark.xfail"), Some(false));
        assert_eq!(
            python("@pytest.mark.xfail(reason=\"bug\", strict=True)"),
            Some(false)
        );
        assert_eq!(
            python("@pytest.mark.xfail(sys.version_info < (3, 9), reason=\"x\")"),
            Some(true)
        );
        assert_eq!(
            python("@pytest.mark.xfail(condition=IS_PYPY, reason=\"x\")"),
            Some(true)
        );
        assert_eq!(python("@pytest.mark.parametrize(\"a\", [1])"), None);
        assert!(rust("ignore") && rust("ignore = \"slow\""));
        assert!(!rust("ignored") && !rust("cfg_attr(miri, ignore)"));
    }
}
