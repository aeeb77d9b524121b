//! The man page, generated from the clap definitions so it never drifts from
//! `--help`: speed(1) with a section per command (its synopsis, description
//! and options), then the exit status, environment and files a user of the
//! page looks for. `speed man > speed.1` writes it.

use std::io::Write;

use clap_mangen::Man;

/// speed(1) in roff.
pub fn page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let mut cmd = cmd.disable_help_subcommand(true);
    // Building propagates the global flags and names each subcommand
    // `speed review`, as its synopsis should read.
    cmd.build();
    let mut out = Vec::new();
    Man::new(cmd.clone()).render(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let man = Man::new(sub.clone());
        let mut part = Vec::new();
        man.render_synopsis_section(&mut part)?;
        man.render_description_section(&mut part)?;
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut part)?;
        }
        // The command's own headings become subsections of its section.
        let part = String::from_utf8_lossy(&part)
            .lines()
            .map(|line| match line.strip_prefix(".SH ") {
                Some(heading) => format!(".SS {heading}\n"),
                None => format!("{line}\n"),
            })
            .collect::<String>();
        writeln!(
            out,
            ".SH \"SPEED {}\"",
            sub.get_name().to_uppercase().replace('"', "")
        )?;
        out.write_all(part.as_bytes())?;
    }
    out.write_all(EXTRA.as_bytes())?;
    Ok(out)
}

/// What `--help` does not say: exit codes, environment, files.
const EXTRA: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
every reviewed task approved (or nothing to review)
.TP
\fB1\fR
an error: bad input, configuration, git, I/O
.TP
\fB2\fR
bad command\-line usage
.TP
\fB50\fR
at least one task: changes requested (a spec review: needs revision)
.TP
\fB51\fR
a spec review is blocked: a person must act
.TP
\fB52\fR
the model could not be reached or timed out, after retries
.TP
\fB53\fR
the model's output stayed invalid after one corrective retry
.TP
\fB54\fR
submitted to a provider's batch API; results pending (\fBspeed review \-\-collect\fR)
.PP
Across a batch the most severe outcome wins: 1 > 53 > 52 > 51 > 50 > 54 > 0.
With \fB\-\-format sarif\fR, no log is written unless every review decided (0 or 50).
.SH ENVIRONMENT
.TP
\fBMAIN_BRANCH\fR
the main branch, after \fB\-\-base\fR
.TP
\fBSKIP_GUARDIAN\fR=true
as \fB\-\-no\-guardian\fR
.TP
\fBNO_COLOR\fR
no colour with \fB\-\-color auto\fR
.TP
\fBGITHUB_STEP_SUMMARY\fR
with \fB\-\-format github\fR, the file the Markdown summary is appended to
.TP
\fBSPEED_LOG\fR
a tracing filter for the log on stderr (e.g. \fBdebug\fR)
.TP
\fBCI\fR=true
in CI, \fBspeed review \-\-collect\fR with no batch state under \fI.speed/cache/batches/\fR is an error (exit 1): carry that folder from the job that submitted
.SH FILES
.TP
\fI.speed/config.toml\fR
the configuration, read at the main branch's commit
.TP
\fI.speed/features/<feature>/tasks/<id>.json\fR, \fI.speed/tasks/<id>.json\fR
task files
.TP
\fI.speed/reviews/\fR
review reports, \fIlog.jsonl\fR and \fInits.json\fR
.TP
\fI.speed/cache/\fR
the symbol index and verdict cache; safe to delete
.TP
\fIrefs/notes/speed\fR
speed's verdicts as git notes on the reviewed commits (\fBspeed notes push\fR, \fBspeed notes fetch\fR)
"#;
