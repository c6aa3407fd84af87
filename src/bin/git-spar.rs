fn main() -> std::process::ExitCode {
    rails_spar::cli::spar::main()
}
