//! Which string literals of a test's assertion are requirements on the fix, and which
//! are not: the failure messages that test frameworks print when a check fails
//! (`assert x, "message"`, unittest's `msg=`, Go's `t.Fatalf`/`t.Errorf`, testify's
//! `msgAndArgs`, Rust's `assert!`/`assert_eq!` messages and `.expect(...)`, Node's
//! and chai's `message` arguments, Jest's `expect(value, message)`, JUnit's message
//! arguments, AssertJ's `.as(...)`, GoogleTest's `<< "message"`) and the names that
//! tests give themselves (`it("...")`, `t.Run("...")`). No valid fix has to reproduce
//! either, so neither is evidence that the tests ask for something the issue never
//! says.
//!
//! The input is one assertion statement as [`super::code::lex`] leaves it (its lines'
//! code joined by newlines, every string literal a `""` placeholder, in order); the
//! answer is the positions of the literals that are not requirements. A small scanner
//! of calls and their top-level arguments, not a parser: statements in diffs are
//! fragments. Pure; the language comes from the test file's path.

use std::collections::BTreeSet;

/// The languages whose test frameworks this module knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Go,
    Rust,
    JavaScript,
    Java,
    /// C and C++ (GoogleTest).
    C,
    Other,
}

impl Language {
    /// A file's language, by its extension.
    pub fn of_path(path: &str) -> Language {
        let extension = path.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase()).unwrap_or_default();
        match extension.as_str() {
            "py" => Language::Python,
            "go" => Language::Go,
            "rs" => Language::Rust,
            "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Language::JavaScript,
            "java" | "kt" | "groovy" | "scala" => Language::Java,
            "c" | "cc" | "cpp" | "cxx" | "h" | "hh" | "hpp" | "hxx" => Language::C,
            _ => Language::Other,
        }
    }
}

/// One token of a statement's code.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    /// The n-th string literal of the statement.
    Literal(usize),
    Punct(char),
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut literal = 0;
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        if c == '"' {
            // The lexer's placeholder: always a pair.
            out.push(Token::Literal(literal));
            literal += 1;
            index += if chars.get(index + 1) == Some(&'"') { 2 } else { 1 };
        } else if c.is_alphanumeric() || c == '_' {
            let start = index;
            while index < chars.len() && (chars[index].is_alphanumeric() || chars[index] == '_') {
                index += 1;
            }
            out.push(Token::Word(chars[start..index].iter().collect()));
        } else {
            if !c.is_whitespace() {
                out.push(Token::Punct(c));
            }
            index += 1;
        }
    }
    out
}

/// A call in a statement: its name, the word before the dot in front of it (`t` of
/// `t.Fatalf`), and its top-level arguments (token ranges).
struct Call {
    name: String,
    receiver: Option<String>,
    /// Each argument's tokens, and whether it is `keyword=` (its keyword).
    arguments: Vec<(Option<String>, std::ops::Range<usize>)>,
    /// Where the call's closing parenthesis is (one past the arguments).
    end: usize,
}

fn is_open(token: &Token) -> bool {
    matches!(token, Token::Punct('(' | '[' | '{'))
}

fn is_close(token: &Token) -> bool {
    matches!(token, Token::Punct(')' | ']' | '}'))
}

/// Every call of the statement (`name(`, `name!(`, `a.name(`), outer ones first.
fn calls(tokens: &[Token]) -> Vec<Call> {
    let mut out = Vec::new();
    for (open, token) in tokens.iter().enumerate() {
        if *token != Token::Punct('(') || open == 0 {
            continue;
        }
        let mut name_at = open - 1;
        if tokens[name_at] == Token::Punct('!') && name_at > 0 {
            name_at -= 1;
        }
        let Token::Word(name) = &tokens[name_at] else { continue };
        let receiver =
            match (name_at.checked_sub(2).map(|at| &tokens[at]), name_at.checked_sub(1).map(|at| &tokens[at])) {
                (Some(Token::Word(receiver)), Some(Token::Punct('.'))) => Some(receiver.clone()),
                (Some(Token::Punct(')')), Some(Token::Punct('.'))) => Some(")".to_string()),
                _ => None,
            };
        let mut depth = 0;
        let mut arguments = Vec::new();
        let mut start = open + 1;
        let mut end = tokens.len();
        for (at, token) in tokens.iter().enumerate().skip(open + 1) {
            if is_open(token) {
                depth += 1;
            } else if is_close(token) {
                if depth == 0 {
                    end = at;
                    break;
                }
                depth -= 1;
            } else if depth == 0 && *token == Token::Punct(',') {
                arguments.push(start..at);
                start = at + 1;
            }
        }
        if start < end {
            arguments.push(start..end);
        }
        let arguments = arguments
            .into_iter()
            .map(|range| {
                let keyword = match (tokens.get(range.start), tokens.get(range.start + 1), tokens.get(range.start + 2))
                {
                    (Some(Token::Word(word)), Some(Token::Punct('=')), next) if next != Some(&Token::Punct('=')) => {
                        Some(word.clone())
                    }
                    _ => None,
                };
                (keyword, range)
            })
            .collect();
        out.push(Call { name: name.clone(), receiver, arguments, end });
    }
    out
}

/// What a call's arguments are, for the literals in them.
enum Rule {
    /// Every literal in the call is a message (`t.Fatalf`, `fail`, `panic!`).
    All,
    /// Positional arguments from this one on are the message.
    From(usize),
    /// JUnit: with more arguments than the assertion needs, the message is the first
    /// (JUnit 4, Hamcrest) or the last (JUnit 5) one.
    JUnit { needs: usize },
    /// The first argument is the test's name (`it("...", ...)`).
    Name,
}

fn rule(language: Language, call: &Call) -> Option<Rule> {
    let name = call.name.as_str();
    let receiver = call.receiver.as_deref();
    let python_unittest_two = [
        "assertEqual",
        "assertEquals",
        "assertNotEqual",
        "assertIs",
        "assertIsNot",
        "assertIn",
        "assertNotIn",
        "assertIsInstance",
        "assertNotIsInstance",
        "assertGreater",
        "assertGreaterEqual",
        "assertLess",
        "assertLessEqual",
        "assertCountEqual",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertMultiLineEqual",
        "assertSequenceEqual",
        "assertRegex",
        "assertNotRegex",
        "assertRegexpMatches",
        "assertDictContainsSubset",
    ];
    let testify_one = [
        "True",
        "False",
        "Nil",
        "NotNil",
        "Empty",
        "NotEmpty",
        "NoError",
        "Error",
        "Zero",
        "NotZero",
        "Panics",
        "NotPanics",
        "FileExists",
        "DirExists",
        "Fail",
        "FailNow",
    ];
    let testify_two = [
        "Equal",
        "NotEqual",
        "EqualValues",
        "NotEqualValues",
        "Exactly",
        "Contains",
        "NotContains",
        "Subset",
        "NotSubset",
        "ElementsMatch",
        "Greater",
        "GreaterOrEqual",
        "Less",
        "LessOrEqual",
        "Len",
        "IsType",
        "Implements",
        "Same",
        "NotSame",
        "ErrorIs",
        "NotErrorIs",
        "ErrorAs",
        "EqualError",
        "ErrorContains",
        "JSONEq",
        "YAMLEq",
        "Regexp",
        "NotRegexp",
    ];
    match language {
        Language::Python => match name {
            "fail" | "skip" | "xfail" => Some(Rule::All),
            _ if python_unittest_two.contains(&name) => Some(Rule::From(2)),
            "assertTrue" | "assertFalse" | "assert_" | "failIf" | "failUnless" | "assertIsNone" | "assertIsNotNone" => {
                Some(Rule::From(1))
            }
            "assertAlmostEqual" | "assertNotAlmostEqual" | "assertAlmostEquals" => Some(Rule::From(3)),
            // numpy.testing: (actual, desired, err_msg), (actual, desired, decimal, err_msg).
            "assert_equal" | "assert_array_equal" | "assert_string_equal" => Some(Rule::From(2)),
            "assert_almost_equal" | "assert_array_almost_equal" => Some(Rule::From(3)),
            "subTest" => Some(Rule::Name),
            _ => None,
        },
        Language::Go => match (receiver, name) {
            (_, "Fatal" | "Fatalf" | "Error" | "Errorf" | "Log" | "Logf" | "Skip" | "Skipf")
                if receiver.is_some_and(|receiver| !matches!(receiver, "assert" | "require")) =>
            {
                Some(Rule::All)
            }
            (Some("assert" | "require"), _) if testify_one.contains(&name) => Some(Rule::From(2)),
            (Some("assert" | "require"), _) if testify_two.contains(&name) => Some(Rule::From(3)),
            (Some("assert" | "require"), "InDelta" | "InEpsilon" | "WithinDuration") => Some(Rule::From(4)),
            (Some(_), "Run") => Some(Rule::Name),
            (None, "panic") => Some(Rule::All),
            _ => None,
        },
        Language::Rust => match name {
            "assert" | "debug_assert" => Some(Rule::From(1)),
            "assert_eq" | "assert_ne" | "debug_assert_eq" | "debug_assert_ne" | "assert_matches" => Some(Rule::From(2)),
            "panic" | "unreachable" | "todo" | "unimplemented" => Some(Rule::All),
            "expect" | "expect_err" if receiver.is_some() => Some(Rule::All),
            _ => None,
        },
        Language::JavaScript => match (receiver, name) {
            (
                Some("assert"),
                "ok" | "isTrue" | "isFalse" | "isNull" | "isNotNull" | "isUndefined" | "isDefined" | "isOk" | "isNotOk"
                | "exists" | "notExists",
            ) => Some(Rule::From(1)),
            (
                Some("assert"),
                "equal" | "strictEqual" | "deepEqual" | "deepStrictEqual" | "notEqual" | "notStrictEqual"
                | "notDeepEqual" | "notDeepStrictEqual" | "match" | "doesNotMatch" | "include" | "notInclude"
                | "lengthOf" | "instanceOf" | "typeOf" | "sameMembers" | "isAbove" | "isBelow",
            ) => Some(Rule::From(2)),
            (Some("assert"), "fail") | (None, "fail") => Some(Rule::All),
            (None, "assert") => Some(Rule::From(1)),
            // Jest's (jest-expect-message) and chai's `expect(value, message)`.
            (None, "expect") => Some(Rule::From(1)),
            (None, "it" | "test" | "describe" | "context" | "specify" | "suite") => Some(Rule::Name),
            (Some("it" | "test" | "describe"), "each" | "only" | "skip" | "todo" | "concurrent") => Some(Rule::Name),
            _ => None,
        },
        Language::Java => match name {
            "assertEquals"
            | "assertNotEquals"
            | "assertArrayEquals"
            | "assertSame"
            | "assertNotSame"
            | "assertIterableEquals"
            | "assertLinesMatch" => Some(Rule::JUnit { needs: 2 }),
            "assertThat" if receiver.is_none_or(|receiver| receiver == "MatcherAssert" || receiver == "Assert") => {
                Some(Rule::JUnit { needs: 2 })
            }
            "assertTrue" | "assertFalse" | "assertNull" | "assertNotNull" => Some(Rule::JUnit { needs: 1 }),
            "assertThrows" | "assertDoesNotThrow" => Some(Rule::JUnit { needs: 2 }),
            "fail" => Some(Rule::All),
            "as" | "describedAs" | "withFailMessage" | "overridingErrorMessage" if receiver.is_some() => {
                Some(Rule::All)
            }
            "DisplayName" => Some(Rule::Name),
            _ => None,
        },
        Language::C => match name {
            "FAIL" | "ADD_FAILURE" | "SUCCEED" | "GTEST_SKIP" => Some(Rule::All),
            "SECTION" | "TEST_CASE" | "SCENARIO" => Some(Rule::Name),
            _ => None,
        },
        Language::Other => None,
    }
}

fn literals_in(tokens: &[Token], range: std::ops::Range<usize>, out: &mut BTreeSet<usize>) {
    for token in &tokens[range] {
        if let Token::Literal(index) = token {
            out.insert(*index);
        }
    }
}

/// The positions (from 0, in the statement's order) of the literals of an assertion
/// statement that are failure messages or test names, not requirements on the fix.
/// `code` is the statement's lexed code ([`super::code::lex`]); `junit5` says whether
/// the file uses JUnit 5 (message last) rather than JUnit 4 (message first).
pub fn non_requirements(code: &str, language: Language, junit5: bool) -> BTreeSet<usize> {
    let tokens = tokens(code);
    let mut out = BTreeSet::new();
    // Python's `assert condition, message`: everything after the top-level comma.
    if language == Language::Python || language == Language::Other {
        if let Some(start) = tokens.iter().position(|token| *token == Token::Word("assert".into())) {
            let mut depth = 0;
            for (at, token) in tokens.iter().enumerate().skip(start + 1) {
                if is_open(token) {
                    depth += 1;
                } else if is_close(token) {
                    depth -= 1;
                } else if depth == 0 && *token == Token::Punct(',') {
                    literals_in(&tokens, at + 1..tokens.len(), &mut out);
                    break;
                }
            }
        }
    }
    // GoogleTest's `EXPECT_EQ(a, b) << "message"`: what follows the macro's `<<`.
    if language == Language::C {
        for call in calls(&tokens) {
            let is_gtest = ["EXPECT_", "ASSERT_"].iter().any(|prefix| call.name.starts_with(prefix));
            if is_gtest && tokens.get(call.end + 1) == Some(&Token::Punct('<')) {
                literals_in(&tokens, call.end + 1..tokens.len(), &mut out);
            }
        }
    }
    for call in calls(&tokens) {
        // Keywords that name a message: unittest's `msg=`, numpy's `err_msg=`.
        for (keyword, range) in &call.arguments {
            if matches!(keyword.as_deref(), Some("msg" | "err_msg" | "reason")) && language != Language::Java {
                literals_in(&tokens, range.clone(), &mut out);
            }
        }
        let Some(rule) = rule(language, &call) else { continue };
        let positional: Vec<&std::ops::Range<usize>> =
            call.arguments.iter().filter(|(keyword, _)| keyword.is_none()).map(|(_, range)| range).collect();
        match rule {
            Rule::All => {
                for (_, range) in &call.arguments {
                    literals_in(&tokens, range.clone(), &mut out);
                }
            }
            Rule::From(first) => {
                for range in positional.iter().skip(first) {
                    literals_in(&tokens, (*range).clone(), &mut out);
                }
            }
            Rule::JUnit { needs } => {
                if positional.len() > needs {
                    let message = if junit5 { positional[positional.len() - 1] } else { positional[0] };
                    literals_in(&tokens, message.clone(), &mut out);
                }
            }
            Rule::Name => {
                if let Some(range) = positional.first() {
                    literals_in(&tokens, (*range).clone(), &mut out);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::screen::code::lex;

    /// The literals of `statement` that are requirements, in order.
    fn requirements(statement: &str, language: Language) -> Vec<String> {
        requirements_in(statement, language, false)
    }

    fn requirements_in(statement: &str, language: Language, junit5: bool) -> Vec<String> {
        let lexed: Vec<_> = statement.lines().map(lex).collect();
        let code = lexed.iter().map(|line| line.code.as_str()).collect::<Vec<_>>().join("\n");
        let literals: Vec<String> = lexed.into_iter().flat_map(|line| line.literals).collect();
        let skipped = non_requirements(&code, language, junit5);
        literals.into_iter().enumerate().filter(|(index, _)| !skipped.contains(index)).map(|(_, text)| text).collect()
    }

    #[test]
    fn python_messages_are_not_requirements_and_compared_values_are() {
        let python = Language::Python;
        assert_eq!(requirements(r#"assert f(x) == "a b c d", "f gave the wrong text""#, python), ["a b c d"]);
        assert_eq!(
            requirements("assert (f(x) ==\n        'two words here'), 'message ' + str(x)", python),
            ["two words here"]
        );
        assert_eq!(
            requirements(r#"self.assertEqual(render(w), "<p>a label</p>", "the label is wrong")"#, python),
            ["<p>a label</p>"]
        );
        assert_eq!(requirements(r#"self.assertEqual(a, b, msg="values differ here")"#, python), Vec::<String>::new());
        assert_eq!(requirements(r#"self.assertTrue(ok, "should be ok by now")"#, python), Vec::<String>::new());
        assert_eq!(
            requirements(r#"np.testing.assert_allclose(a, b, err_msg="arrays differ a lot")"#, python),
            Vec::<String>::new()
        );
        // What the fix must produce stays: a match= pattern, an expected message.
        assert_eq!(
            requirements(r#"with pytest.raises(ValueError, match="no labelable element"):"#, python),
            ["no labelable element"]
        );
        assert_eq!(
            requirements(r#"self.assertRaisesMessage(TypeError, "expected a string value")"#, python),
            ["expected a string value"]
        );
        assert_eq!(requirements(r#"pytest.fail("this should not be reached")"#, python), Vec::<String>::new());
    }

    #[test]
    fn go_failure_messages_are_not_requirements() {
        let go = Language::Go;
        assert_eq!(requirements(r#"t.Fatalf("Clamp(15, 0, 10) = %d, want 10", got)"#, go), Vec::<String>::new());
        assert_eq!(
            requirements(r#"if got != "hello world" { t.Errorf("got %q, want it", got) }"#, go),
            ["hello world"]
        );
        assert_eq!(
            requirements(r#"assert.Equal(t, "expected output text", got, "output of %s", name)"#, go),
            ["expected output text"]
        );
        assert_eq!(
            requirements(r#"require.EqualError(t, err, "unknown unit parsec", "the error")"#, go),
            ["unknown unit parsec"]
        );
        assert_eq!(requirements(r#"t.Run("values above the range", func(t *testing.T) {"#, go), Vec::<String>::new());
    }

    #[test]
    fn rust_assert_messages_and_expect_are_not_requirements() {
        let rust = Language::Rust;
        assert_eq!(requirements(r#"assert!(out.contains("a b c"), "missing text in {}", out);"#, rust), ["a b c"]);
        assert_eq!(
            requirements(r#"assert_eq!(render(&w), "two words", "render of {:?} was wrong", w);"#, rust),
            ["two words"]
        );
        assert_eq!(requirements(r#"let v = parse("1 2 3").expect("the input should parse");"#, rust), ["1 2 3"]);
        assert_eq!(requirements(r#"panic!("unexpected variant here");"#, rust), Vec::<String>::new());
    }

    #[test]
    fn javascript_messages_and_test_names_are_not_requirements() {
        let js = Language::JavaScript;
        assert_eq!(
            requirements(r#"expect(slugify("Hello World"), "slug of a title").toBe("hello-world")"#, js),
            ["Hello World", "hello-world"]
        );
        assert_eq!(requirements(r#"assert.strictEqual(out, "a b", "output should match the file")"#, js), ["a b"]);
        assert_eq!(requirements(r#"assert(ok, "should have been ok")"#, js), Vec::<String>::new());
        assert_eq!(
            requirements(r#"it("throws on an unknown unit", () => { expect(f).toThrow("unknown unit parsec") })"#, js),
            ["unknown unit parsec"]
        );
    }

    #[test]
    fn junit_messages_are_the_first_argument_in_junit_4_and_the_last_in_junit_5() {
        let java = Language::Java;
        assert_eq!(
            requirements(r#"assertEquals("the label is wrong", "<p>a label</p>", render(w));"#, java),
            ["<p>a label</p>"]
        );
        assert_eq!(
            requirements_in(r#"assertEquals("<p>a label</p>", render(w), "the label is wrong");"#, java, true),
            ["<p>a label</p>"]
        );
        // Two arguments: the string is the expected value.
        assert_eq!(requirements(r#"assertEquals("a label here", render(w));"#, java), ["a label here"]);
        assert_eq!(requirements(r#"assertTrue("should be empty now", list.isEmpty());"#, java), Vec::<String>::new());
        assert_eq!(
            requirements(r#"assertThat(out).as("rendered output").isEqualTo("two words");"#, java),
            ["two words"]
        );
        assert_eq!(requirements(r#"fail("expected an exception here");"#, java), Vec::<String>::new());
    }

    #[test]
    fn googletest_streamed_messages_are_not_requirements() {
        assert_eq!(requirements(r#"EXPECT_EQ(dump(j), "[1, 2]") << "dump of an array";"#, Language::C), ["[1, 2]"]);
    }

    #[test]
    fn languages_come_from_the_extension() {
        assert_eq!(Language::of_path("pkg/clamp_test.go"), Language::Go);
        assert_eq!(Language::of_path("tests/test_x.py"), Language::Python);
        assert_eq!(Language::of_path("src/a.test.ts"), Language::JavaScript);
        assert_eq!(Language::of_path("src/test/java/A.java"), Language::Java);
        assert_eq!(Language::of_path("tests/it.rs"), Language::Rust);
        assert_eq!(Language::of_path("Makefile"), Language::Other);
    }
}
