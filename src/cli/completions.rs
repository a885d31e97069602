//! `sightline completions SHELL`: the shell's completion script on stdout (commands, options,
//! report and rule names, benchmarks and their parameters), generated from the same clap
//! definition that parses the command line.

use std::process::ExitCode;

use clap_complete::Shell;

/// Arguments of `sightline completions`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Print a shell completion script",
    long_about = "Prints a completion script for SHELL on stdout, e.g. \
                  `sightline completions bash > ~/.local/share/bash-completion/completions/sightline` \
                  or `sightline completions zsh > ~/.zfunc/_sightline`."
)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: Shell,
}

/// Prints the completion script of `command` (the whole command line's definition, which the
/// dispatcher that names this module hands in).
pub fn main(args: CompletionsArgs, mut command: clap::Command) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "sightline", &mut script);
    super::run::print_or_fail(String::from_utf8_lossy(&script).trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_bash_script_completes_commands_and_benchmarks() {
        let mut command = crate::cli::Cli::command();
        let mut script = Vec::new();
        clap_complete::generate(Shell::Bash, &mut command, "sightline", &mut script);
        let script = String::from_utf8(script).expect("utf-8");
        for word in [
            "stats",
            "analyze",
            "diff",
            "capture",
            "sync-timing",
            "--overlapping",
        ] {
            assert!(
                script.contains(word),
                "{word} missing from the bash completions"
            );
        }
    }
}
