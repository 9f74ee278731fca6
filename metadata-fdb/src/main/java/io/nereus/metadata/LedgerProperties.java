package io.nereus.metadata;

import java.util.Map;

/**
 * The properties of a managed ledger (Pulsar {@code ManagedLedger.getProperties()}), stored under
 * {@code (STREAM, sid, PROPS)} by {@link io.nereus.metadata.codec.LedgerPropertiesCodec}.
 */
public record LedgerProperties(Map<String, String> values) {
    public LedgerProperties {
        values = Map.copyOf(values);
    }

    public static LedgerProperties empty() {
        return new LedgerProperties(Map.of());
    }
}
