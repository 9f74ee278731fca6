package io.nereus.fdb.conformance;

import java.util.Map;

/** Names of the FoundationDB error codes the suite asserts on, for readable failure messages. */
final class ErrorNames {
    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1007, "transaction_too_old"),
            Map.entry(1009, "future_version"),
            Map.entry(1020, "not_committed"),
            Map.entry(1021, "commit_unknown_result"),
            Map.entry(1025, "transaction_cancelled"),
            Map.entry(1031, "transaction_timed_out"),
            Map.entry(1032, "too_many_watches"),
            Map.entry(1034, "watches_disabled"),
            Map.entry(1036, "accessed_unreadable"),
            Map.entry(1038, "database_locked"),
            Map.entry(1101, "operation_cancelled"),
            Map.entry(2000, "client_invalid_operation"),
            Map.entry(2004, "key_outside_legal_range"),
            Map.entry(2006, "invalid_option_value"),
            Map.entry(2012, "range_limits_invalid"),
            Map.entry(2017, "used_during_commit"),
            Map.entry(2018, "invalid_mutation_type"),
            Map.entry(2020, "transaction_invalid_version"),
            Map.entry(2021, "no_commit_version"),
            Map.entry(2101, "transaction_too_large"),
            Map.entry(2102, "key_too_large"),
            Map.entry(2103, "value_too_large"),
            Map.entry(2210, "exact_mode_without_limits"));

    private ErrorNames() {
    }

    static String of(int code) {
        return NAMES.getOrDefault(code, "?");
    }
}
