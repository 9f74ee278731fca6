package io.nereus.metadata.codec;

import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.CatalogState;
import io.nereus.metadata.StreamId;

/**
 * Binary form of a {@link CatalogEntry}, the value of {@code (CATALOG, managedLedgerName)}; the key
 * supplies the name.
 *
 * <pre>
 * format 1:
 *   u8  format = 1
 *   i64 streamId
 *   i64 virtualLedgerId
 *   i64 incarnation
 *   u8  state (CatalogState code)
 * </pre>
 */
public final class CatalogEntryCodec {
    public static final CatalogEntryCodec INSTANCE = new CatalogEntryCodec();
    public static final int FORMAT_V1 = 1;

    private CatalogEntryCodec() {
    }

    public byte[] encode(CatalogEntry e) {
        return new ValueWriter(26)
                .u8(FORMAT_V1)
                .i64(e.streamId().value())
                .i64(e.virtualLedgerId())
                .i64(e.incarnation())
                .u8(e.state().code())
                .toByteArray();
    }

    /** Decodes the value stored under the catalog key of {@code managedLedgerName}. */
    public CatalogEntry decode(String managedLedgerName, byte[] value) {
        ValueReader r = new ValueReader(() -> "CatalogEntry value of '" + managedLedgerName + "'", value);
        r.formatVersion(FORMAT_V1);
        long stream = r.i64("streamId");
        long ledger = r.i64("virtualLedgerId");
        long incarnation = r.i64("incarnation");
        int state = r.u8("state");
        r.expectEnd();
        return r.build(() -> new CatalogEntry(managedLedgerName, new StreamId(stream), ledger, incarnation,
                CatalogState.fromCode(state)));
    }
}
