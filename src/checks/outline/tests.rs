use super::*;

fn rust(text: &str) -> Outline {
    outline(Lang::Rust, text, false, false).unwrap()
}

fn python(text: &str, test_file: bool) -> Outline {
    outline(Lang::Python, text, test_file, false).unwrap()
}

fn markers(o: &Outline) -> Vec<(Marker, u32)> {
    let mut m: Vec<(Marker, u32)> = o.markers.iter().map(|f| (f.marker, f.line)).collect();
    m.sort_by_key(|x| x.1);
    m
}

#[test]
fn rust_markers_in_code_not_in_comments_or_strings() {
    let o = rust(
        "fn a() {\n    todo!()\n}\n// todo!()\nfn b() -> Vec<u8> {\n    let s = \"dbg!(x)\";\n    vec![todo!(), dbg!(1)]\n}\nfn c() { std::todo!(\"later\") }\nfn d() -> u8 {\n    unimplemented!()\n}\nfn e(x: u8) -> u8 {\n    match x {\n        0 => 1,\n        _ => unimplemented!(\"unsupported\"),\n    }\n}\nmacro_rules! m { () => { todo!() } }\n#[cfg(doc)]\nfn docs() { todo!() }\npub fn todo() -> u8 { todo!() }\n",
    );
    assert_eq!(
        markers(&o),
        vec![
            (Marker::Todo, 2),
            (Marker::Todo, 7),
            (Marker::Dbg, 7),
            (Marker::Todo, 9),
            (Marker::Unimplemented, 11)
        ]
    );
    assert_eq!(o.markers[0].function.as_deref(), Some("a"));
}

#[test]
fn unimplemented_inside_another_macro_counts_as_in_a_function() {
    // libc writes its trait impls inside `s_no_extra_traits! { … }`.
    let o = rust(
        "s! {\n    impl Hash for U {\n        fn hash(&self) {\n            unimplemented!(\"traits\");\n        }\n    }\n    impl Eq for U {\n        fn eq(&self) -> bool {\n            unimplemented!()\n        }\n    }\n    fn f(x: u8) -> u8 {\n        match x { 0 => 1, _ => unimplemented!() }\n    }\n    fn g() { todo!(\"traits\") }\n}\n",
    );
    assert_eq!(
        markers(&o),
        vec![(Marker::Unimplemented, 9), (Marker::Todo, 15)]
    );
}

#[test]
fn rust_tests_and_test_regions() {
    let o = rust(
        "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn one() { assert!(true) }\n\n    #[test]\n    #[ignore = \"slow\"]\n    fn two() { todo!() }\n\n    #[tokio::test]\n    async fn three() {}\n}\n\n#[cfg(not(test))]\nmod real {}\n",
    );
    let names: Vec<(&str, Option<u32>)> = o
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.skipped_at))
        .collect();
    assert_eq!(
        names,
        vec![
            ("tests::one", None),
            ("tests::two", Some(11)),
            ("tests::three", None)
        ]
    );
    assert_eq!(o.test_regions, vec![(3, 16)]);
    assert!(o.in_test_region(12));
    assert!(!o.in_test_region(19));
}

#[test]
fn a_test_attribute_behind_cfg_attr_is_a_test() {
    // tokio 1.54 rewrote `#[tokio::test(flavor = "multi_thread")]` this way.
    let o = rust(
        "#[cfg_attr(target_os = \"emscripten\", tokio::test(flavor = \"current_thread\"))]\n#[cfg_attr(not(target_os = \"emscripten\"), tokio::test(flavor = \"multi_thread\"))]\nasync fn a() {}\n\n#[cfg_attr(any(unix, windows), allow(dead_code), test)]\nfn b() {}\n\n#[cfg_attr(miri, ignore)]\n#[test]\nfn c() {}\n\n#[cfg_attr(feature = \"x, test\", allow(unused))]\nfn d() {}\n",
    );
    let names: Vec<(&str, Option<u32>)> = o
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.skipped_at))
        .collect();
    // Ignored only under miri: not skipped where the tests normally run.
    assert_eq!(names, vec![("a", None), ("b", None), ("c", None)]);
}

#[test]
fn a_rust_test_outside_a_test_module_is_its_own_region() {
    let o = rust("fn f() {}\n\n#[test]\nfn t() {\n    f();\n}\n");
    assert_eq!(o.test_regions, vec![(3, 6)]);
}

#[test]
fn python_debugger_calls() {
    let o = python(
        "import pdb\n\ndef f(x):\n    pdb.set_trace()\n    breakpoint()\n    return x  # breakpoint()\n\ns = 'breakpoint()'\n",
        false,
    );
    assert_eq!(
        markers(&o),
        vec![(Marker::SetTrace, 4), (Marker::Breakpoint, 5)]
    );
}

#[test]
fn python_placeholder_bodies() {
    let o = python(
        r#"
def todo():
    pass

def later():
    """Docstring."""
    ...

def unfinished(x):
    raise NotImplementedError

def real(x):
    if x:
        raise NotImplementedError("unsupported")
    return x

class Hooks(Base):
    def log_message(self, *args):
        pass

class Empty(Exception):
    pass

class Shape(Protocol):
    def area(self) -> float: ...

class Store(ABC):
    @abstractmethod
    def get(self): ...

@overload
def f(x: int) -> int: ...

if TYPE_CHECKING:
    def g() -> None: ...

class Plain:
    def method(self):
        raise NotImplementedError()

class Shape2:
    def area(self):
        raise NotImplementedError

class Square(Shape2):
    def area(self):
        return 4

class BaseCache:
    def get(self, key):
        raise NotImplementedError

class Cache:
    def get(self, key):
        raise NotImplementedError("subclasses of Cache must provide get()")

    def put(self, key):
        raise NotImplementedError("TODO: write it")

def noop(*args):
    pass
"#,
        false,
    );
    assert_eq!(
        markers(&o),
        vec![
            (Marker::PassBody, 3),
            (Marker::EllipsisBody, 7),
            (Marker::NotImplemented, 10),
            (Marker::NotImplemented, 39),
            (Marker::NotImplemented, 58)
        ]
    );
}

#[test]
fn python_tests_and_skips() {
    let o = python(
        r#"
import pytest, unittest

def test_a():
    assert 1

@pytest.mark.skip(reason="flaky")
def test_b():
    assert 2

def helper():
    pass

@unittest.skip("later")
class TestThing(unittest.TestCase):
    def test_c(self):
        def test_inner():
            pass
        assert 3

class Other:
    def test_not_a_test_class_method(self):
        pass
"#,
        true,
    );
    let names: Vec<(&str, Option<u32>)> = o
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.skipped_at))
        .collect();
    assert_eq!(
        names,
        vec![
            ("test_a", None),
            ("test_b", Some(7)),
            ("TestThing.test_c", Some(14)),
        ]
    );
}

#[test]
fn python_test_classes_by_django_names_and_nesting() {
    let o = python(
        "class DateFunctionTests(TestCase):\n    def test_a(self):\n        pass\n\n\nclass WithTimeZoneTests(DateFunctionTests):\n    def test_b(self):\n        pass\n\n    class TestInner:\n        def test_c(self):\n            pass\n\n\nclass Helpers:\n    def test_no(self):\n        pass\n",
        true,
    );
    let names: Vec<&str> = o.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "DateFunctionTests.test_a",
            "WithTimeZoneTests.test_b",
            "WithTimeZoneTests.TestInner.test_c"
        ]
    );
}

#[test]
fn stub_files_declare() {
    let o = outline(Lang::Python, "def f() -> int: ...\n", false, true).unwrap();
    assert!(o.markers.is_empty());
}
