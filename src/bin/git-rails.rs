fn main() -> std::process::ExitCode {
    rails_spar::cli::rails::main()
}
