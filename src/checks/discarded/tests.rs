use std::sync::Arc;

use super::*;
use crate::syntax::Text;

fn found(lang: Lang, src: &str) -> Found {
    let parsed = Parsed::new(lang, Arc::new(Text::new(src.as_bytes().to_vec()))).unwrap();
    find(&parsed)
}

/// Each discard as "line kind code", with what it needs when not nothing.
fn rust(src: &str) -> Vec<String> {
    listed(&found(Lang::Rust, src))
}

fn python(src: &str) -> Vec<String> {
    listed(&found(Lang::Python, src))
}

fn listed(f: &Found) -> Vec<String> {
    let mut out: Vec<String> = f
        .discards
        .iter()
        .map(|d| {
            let needs = match &d.needs {
                Needs::Nothing => String::new(),
                other => format!(" [{other:?}]"),
            };
            format!("{} {:?} {}{needs}", d.line, d.kind, d.code)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn err_arms_that_carry_on() {
    let src = r#"
fn count(dir: &Path) -> usize {
    let mut n = 0;
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(_) => continue,
        };
        match fs::metadata(entry.path()) {
            Ok(m) => n += m.len(),
            Err(..) => {}
        }
        let v = match parse(&entry) { Ok(v) => v, Err(_e) => 0 };
        match load() { Ok(x) => x, Err(_) => break }
        match load() { Ok(x) => x, Err(_) => { return Ok(None); } }
        match load() { Ok(x) => x, Err(_) => Default::default() }
        match load() { Ok(x) => x, Err(_) => Vec::new() }
        match load() { Ok(x) => x, Err(_) => None }
        match load() { Ok(x) => x, Err(_) => return }
        match load() { Ok(x) => x, Err(unused) => Ok(false) }
    }
    n
}
"#;
    assert_eq!(
        rust(src),
        [
            "11 ErrArm Err(..) => {}",
            "13 ErrArm Err(_e) => 0",
            "14 ErrArm Err(_) => break",
            "15 ErrArm Err(_) => { return Ok(None); }",
            "16 ErrArm Err(_) => Default::default()",
            "17 ErrArm Err(_) => Vec::new()",
            "18 ErrArm Err(_) => None",
            "19 ErrArm Err(_) => return",
            "20 ErrArm Err(unused) => Ok(false)",
            "7 ErrArm Err(_) => continue",
        ]
    );
}

#[test]
fn err_arms_that_handle_the_error_are_not_discards() {
    let src = r#"
fn f() -> Result<u32, Error> {
    match a() { Ok(x) => x, Err(e) => return Err(e.into()) }
    match a() { Ok(x) => x, Err(e) => { log::warn!("failed: {}", e); 0 } }
    match a() { Ok(x) => x, Err(_) => { eprintln!("failed"); continue } }
    match a() { Ok(x) => x, Err(e) if e.kind() == io::ErrorKind::NotFound => 0, Err(e) => return Err(e) }
    match a() { Ok(x) => x, Err(_) if retries > 0 => continue, Err(e) => return Err(e) }
    match a() { Ok(x) => x, Err(e) => Ok(wrap(e)) }
    match a() { Ok(x) => x, Err(e) => Ok(format!("{e}")) }
    match a() { Ok(x) => x, Err(_) => panic!("cannot") }
    match a() { Ok(x) => x, Err(_) => Err(MyError::Gone) }
    match a() { Some(x) => x, None => 0 }
    match a() { Poll::Ready(Err(_)) => 0, _ => 1 }
    match self.rdr { Ok(ref mut rdr) => rdr.close(), Err(_) => Ok(()) }
    Ok(1)
}
"#;
    assert_eq!(rust(src), Vec::<String>::new());
}

#[test]
fn let_underscore_on_a_result() {
    let src = r#"
use std::io::Write;
fn clean(out: &mut impl Write, path: &Path) {
    let _ = fs::remove_file(path);
    let _ = std::fs::create_dir_all(dir);
    let _ = writeln!(out, "done");
    let _ = out.flush();
    let _ = handle.join();
    let _ = File::create(path);
    let _ = Command::new("git").arg("gc").status();
    let _ = tokio::fs::remove_file(path).await;
    let _ = save(path);
    let _ = self.persist();
    let _ = Self::persist_all();
}
"#;
    assert_eq!(
        rust(src),
        [
            "10 LetUnderscore let _ = Command::new(\"git\").arg(\"gc\").status()",
            "11 LetUnderscore let _ = tokio::fs::remove_file(path).await",
            "12 LetUnderscore let _ = save(path) [Result(\"save\")]",
            "13 LetUnderscore let _ = self.persist() [Result(\"persist\")]",
            "14 LetUnderscore let _ = Self::persist_all() [Result(\"persist_all\")]",
            "4 LetUnderscore let _ = fs::remove_file(path)",
            "5 LetUnderscore let _ = std::fs::create_dir_all(dir)",
            "6 LetUnderscore let _ = writeln!(out, \"done\")",
            "7 LetUnderscore let _ = out.flush() [StdMethod(\"flush\")]",
            "8 LetUnderscore let _ = handle.join() [StdMethod(\"join\")]",
            "9 LetUnderscore let _ = File::create(path)",
        ]
    );
}

#[test]
fn let_underscore_where_nothing_can_fail_or_nothing_is_known() {
    let src = r#"
fn f(buf: &mut String) {
    let mut s = String::new();
    let mut bytes = Vec::new();
    let _ = write!(s, "{}", 1);
    let _ = writeln!(buf, "x");
    let _ = bytes.write_all(b"x");
    let _ = writeln!(io::stderr(), "warning");
    let _ = std::io::stderr().flush();
    let _ = tx.send(1);
    let _ = tx.send(1).await;
    let _ = rx.recv();
    let _ = thing.compute();
    let _ = parts.join(",");
    let _ = load()?;
    let _ = guard;
    let _unused = fs::remove_file(p);
    let _ = format!("x");
}
"#;
    assert_eq!(rust(src), Vec::<String>::new());
}

#[test]
fn ok_as_a_statement_and_unwrap_or_default_on_io() {
    let src = r#"
fn f(p: &Path) -> String {
    out.flush().ok();
    fs::remove_file(p)
        .ok();
    let v = x.ok();
    let s = fs::read_to_string(p).unwrap_or_default();
    let m = p.metadata().unwrap_or_default();
    let e = std::env::var("HOME").unwrap_or_default();
    let n = parse(x).unwrap_or_default();
    let r = read_config(p).unwrap_or_default();
    s
}
"#;
    assert_eq!(
        rust(src),
        [
            "10 UnwrapOrDefault parse(x).unwrap_or_default() [IoResult(\"parse\")]",
            "11 UnwrapOrDefault read_config(p).unwrap_or_default() [IoResult(\"read_config\")]",
            "3 OkStatement out.flush().ok(); [StdMethod(\"ok\")]",
            "5 OkStatement fs::remove_file(p) .ok(); [StdMethod(\"ok\")]",
            "7 UnwrapOrDefault fs::read_to_string(p).unwrap_or_default()",
            "8 UnwrapOrDefault p.metadata().unwrap_or_default() [StdMethod(\"metadata\")]",
        ]
    );
    let f = found(Lang::Rust, src);
    let ok = f.discards.iter().find(|d| d.line == 5).unwrap();
    assert_eq!(ok.lines, [4, 5], "the call's line and the .ok()'s");
}

#[test]
fn return_types_by_name() {
    let src = r#"
fn a() -> io::Result<()> { Ok(()) }
fn b() -> Result<(), std::io::Error> { Ok(()) }
fn c() -> anyhow::Result<u32> { Ok(1) }
fn d() -> fmt::Result { Ok(()) }
fn e() -> Option<u32> { None }
fn f() {}
trait T { fn g(&self) -> Result<Self, Error>; }
fn twice() -> io::Result<()> { Ok(()) }
mod m { fn twice() -> u32 { 1 } }
fn outer() { fn inner() -> std::io::Result<()> { Ok(()) } }
macro_rules! m { () => { fn in_macro() -> io::Result<()> { Ok(()) } } }
"#;
    let f = found(Lang::Rust, src);
    let r = |n: &str| f.returns.get(n).copied();
    assert_eq!(r("a"), Some(Returns::IoResult));
    assert_eq!(r("b"), Some(Returns::IoResult));
    assert_eq!(r("c"), Some(Returns::Result));
    assert_eq!(r("d"), Some(Returns::Result));
    assert_eq!(r("e"), Some(Returns::Other));
    assert_eq!(r("f"), Some(Returns::Other));
    assert_eq!(r("g"), Some(Returns::Result));
    assert_eq!(r("twice"), Some(Returns::Other));
    assert_eq!(r("inner"), Some(Returns::IoResult));
    assert_eq!(r("in_macro"), None, "a macro's body is tokens");
}

#[test]
fn discards_in_macros_comments_and_strings_are_not_code() {
    let src = r#"
// let _ = fs::remove_file(p);
fn f() {
    let s = "Err(_) => 0";
    quote! { let _ = fs::remove_file(p); };
}
"#;
    assert_eq!(rust(src), Vec::<String>::new());
}

#[test]
fn python_excepts() {
    let src = r#"
def load(path):
    try:
        return read(path)
    except:
        return None

def size(path):
    try:
        return os.stat(path).st_size
    except Exception:
        return 0

def each(paths):
    for p in paths:
        try:
            handle(p)
        except (OSError, BaseException) as e:
            continue
        try:
            handle(p)
        except Exception:  # best effort
            pass

def names():
    try:
        return list_names()
    except builtins.Exception:
        return []
"#;
    assert_eq!(
        python(src),
        [
            "11 BroadExcept except Exception: return 0",
            "18 BroadExcept except (OSError, BaseException) as e: continue",
            "22 BroadExcept except Exception: pass",
            "28 BroadExcept except builtins.Exception: return []",
            "5 BareExcept except:",
        ]
    );
    let f = found(Lang::Python, src);
    assert_eq!(f.discards[0].function.as_deref(), Some("load"));
}

#[test]
fn python_excepts_that_handle_the_error_are_not_discards() {
    let src = r#"
def f():
    try:
        g()
    except:
        cleanup()
        raise
    try:
        g()
    except Exception as e:
        log.warning("failed: %s", e)
        raise
    try:
        g()
    except Exception:
        log.exception("failed")
        return None
    try:
        g()
    except ValueError:
        pass
    try:
        g()
    except Exception:
        return fallback
    try:
        g()
    except Exception:
        return "unknown"
    try:
        g()
    except Exception as e:
        raise Wrapped() from e
"#;
    assert_eq!(python(src), Vec::<String>::new());
}
