//! What the kernel says about a thread, read from its `/proc/.../stat` line: an independent
//! check of what the code under test asked for (`--writer-nice`).

/// The nice value in a `/proc/<pid>/task/<tid>/stat` (or `/proc/thread-self/stat`) line: field
/// 19, counted after the command name, which may itself hold spaces and parentheses.
pub fn nice_in_stat(stat: &str) -> Option<i32> {
    let after_comm = stat.get(stat.rfind(')')? + 2..)?;
    // fields from the 3rd (state) on; nice is the 19th field overall
    after_comm.split(' ').nth(19 - 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_field_19_after_a_command_with_spaces_and_parentheses() {
        let line = "4242 (tripline (w) x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 20 7 1 0 99";
        assert_eq!(nice_in_stat(line), Some(7));
        assert_eq!(nice_in_stat("garbage"), None);
    }
}
