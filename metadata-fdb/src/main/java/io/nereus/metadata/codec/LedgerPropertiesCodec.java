package io.nereus.metadata.codec;

import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.LedgerProperties;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Binary form of {@link LedgerProperties}, the value of {@code (STREAM, sid, PROPS)}. Entries are written
 * in key order so equal maps encode to equal bytes. Properties larger than one FoundationDB value are
 * refused on encode (Pulsar's managed-ledger properties are small; cursor state is the large one).
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   varint count
 *   count * { string key, string value }   keys strictly increasing, unique
 * </pre>
 */
public final class LedgerPropertiesCodec implements ValueCodec<LedgerProperties> {
    public static final LedgerPropertiesCodec INSTANCE = new LedgerPropertiesCodec();
    public static final int FORMAT_V1 = 1;
    private static final String WHAT = "LedgerProperties value";

    private LedgerPropertiesCodec() {
    }

    @Override
    public byte[] encode(LedgerProperties props) {
        ValueWriter w = new ValueWriter(64).u8(FORMAT_V1).varint(props.values().size());
        for (Map.Entry<String, String> e : new TreeMap<>(props.values()).entrySet()) {
            w.string(e.getKey()).string(e.getValue());
        }
        return FdbLimits.checkValue(WHAT, w.toByteArray());
    }

    @Override
    public LedgerProperties decode(byte[] bytes) {
        ValueReader r = new ValueReader(WHAT, bytes);
        r.formatVersion(FORMAT_V1);
        int count = r.count("count", 2);
        Map<String, String> values = new HashMap<>();
        String previous = null;
        for (int i = 0; i < count; i++) {
            String k = r.string("key");
            String v = r.string("value");
            if (previous != null && previous.compareTo(k) >= 0) {
                throw r.invalid("keys must be sorted and unique", "key", i);
            }
            values.put(k, v);
            previous = k;
        }
        r.expectEnd();
        return new LedgerProperties(values);
    }
}
