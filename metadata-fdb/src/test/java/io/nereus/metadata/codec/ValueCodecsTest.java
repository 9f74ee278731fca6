package io.nereus.metadata.codec;

import static io.nereus.error.ErrorAssertions.thrown;
import static io.nereus.metadata.codec.CodecAssertions.rejectsEveryTruncation;
import static io.nereus.metadata.codec.CodecAssertions.rejectsTrailingBytes;
import static io.nereus.metadata.codec.CodecAssertions.rejectsUnknownVersion;
import static io.nereus.metadata.codec.CodecAssertions.roundTrips;
import static io.nereus.metadata.codec.CodecAssertions.violation;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.CatalogState;
import io.nereus.metadata.Checksum;
import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.GenerationId;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.LedgerProperties;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.StreamState;
import io.nereus.metadata.WalIntent;
import io.nereus.metadata.WalSectionRef;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalTarget;
import io.nereus.metadata.WalWriterLease;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.List;
import org.junit.jupiter.api.Test;

class ValueCodecsTest {
    private static final StreamId S = StreamId.of(42);

    @Test
    void streamHead_roundTripsAndRejects() {
        StreamHead none = StreamHead.initial();
        StreamHead full = new StreamHead(StreamState.SEALED, 1_000_000, 400, 77, 3, Optional.of("broker-ü-1"), 1L << 40);
        roundTrips(StreamHeadCodec.INSTANCE, none);
        roundTrips(StreamHeadCodec.INSTANCE, full);
        rejectsUnknownVersion(StreamHeadCodec.INSTANCE.encode(full), StreamHeadCodec.INSTANCE::decode, "StreamHead");
    }

    @Test
    void streamHead_layoutIsPinned() {
        StreamHead h = new StreamHead(StreamState.OPEN, 5, 2, 3, 1, Optional.of("b"), 9);
        assertThat(HexFormat.of().formatHex(StreamHeadCodec.INSTANCE.encode(h))).isEqualTo(
                "01" + "01" + "0000000000000005" + "0000000000000002" + "0000000000000003"
                        + "0000000000000001" + "0000000000000009" + "01" + "62");
    }

    @Test
    void streamHead_rejectsStoredInvariantViolationAndUnknownState() {
        byte[] bytes = StreamHeadCodec.INSTANCE.encode(new StreamHead(StreamState.OPEN, 5, 2, 0, 0, Optional.empty(), 0));
        byte[] trimAboveEnd = bytes.clone();
        trimAboveEnd[17] = 9; // low byte of trimOffset
        assertThat(violation(() -> StreamHeadCodec.INSTANCE.decode(trimAboveEnd), "StreamHead value"))
                .contains("trimOffset <= committedEnd");
        byte[] badState = bytes.clone();
        badState[1] = 9;
        assertThat(violation(() -> StreamHeadCodec.INSTANCE.decode(badState), "StreamHead value"))
                .contains("unknown stream state code 9");
    }

    private static IndexRecord walRecord() {
        return new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(100, 110), GenerationId.APPEND,
                IndexRecordState.COMMITTED, new WalTarget(5, 6, 7), Checksum.crc32c(0xFFFF_FFFFL), 10, 4096, 0);
    }

    private static IndexRecord objectRecord() {
        return new IndexRecord(S, ReadView.TOPIC_COMPACTED, OffsetRange.of(0, 1000), GenerationId.of(9),
                IndexRecordState.QUARANTINED, new ObjectTarget("nereus/42/9.obj", 64, 9000, 9100, "\"etag-9\""),
                Checksum.crc32c(0x1234), 500, 9000, 3);
    }

    @Test
    void indexRecord_roundTripsBothTargets() {
        IndexRecord emptyCompacted = new IndexRecord(S, ReadView.TOPIC_COMPACTED, OffsetRange.of(0, 7),
                GenerationId.of(1), IndexRecordState.COMMITTED, new ObjectTarget("streams/42/2/0-7-a", 0, 104, 104,
                "v"), Checksum.crc32c(0x77), 0, 0, 0);
        for (IndexRecord rec : new IndexRecord[] {walRecord(), objectRecord(), emptyCompacted}) {
            IndexKey key = IndexKey.of(rec);
            byte[] bytes = IndexRecordCodec.INSTANCE.encode(rec);
            assertThat(bytes[0]).isEqualTo((byte) 1);
            assertThat(IndexRecordCodec.INSTANCE.decode(key, bytes)).isEqualTo(rec);
            rejectsEveryTruncation(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b));
            rejectsTrailingBytes(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b));
            rejectsUnknownVersion(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b), "IndexRecord value", 0, 3, 255);
            byte[] asRun = bytes.clone();
            asRun[0] = 2;
            assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(key, asRun)).context())
                    .containsEntry("reason", "format 2 is a WAL run's");
        }
    }

    @Test
    void indexRecord_asAnOpenRun_isFormat3_itsEndThenItsValueUnderItsEnd() {
        for (IndexRecord closed : new IndexRecord[] {walRecord(), runRecord()}) {
            IndexRecord open = closed.storedOpen(true);
            IndexKey key = IndexKey.of(open);
            assertThat(key).isEqualTo(IndexKey.openRun(S));
            byte[] inner = IndexRecordCodec.INSTANCE.encode(closed);
            byte[] bytes = IndexRecordCodec.INSTANCE.encode(open);
            byte[] expected = java.nio.ByteBuffer.allocate(9 + inner.length).put((byte) 3).putLong(open.endOffset())
                    .put(inner).array();
            assertThat(bytes).isEqualTo(expected);
            IndexRecord decoded = IndexRecordCodec.INSTANCE.decode(key, bytes);
            assertThat(decoded).isEqualTo(closed);
            assertThat(decoded.open()).isTrue();
            rejectsEveryTruncation(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b));
            rejectsTrailingBytes(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b));
            rejectsUnknownVersion(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b), "IndexRecord value", 1, 2, 4);
            // format 3 only at the open-run key, and formats 1 and 2 never there
            assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(IndexKey.atEnd(open),
                    bytes)).context()).containsEntry("reason", "unknown format version");
            assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(key, inner)).context())
                    .containsEntry("reason", "unknown format version");
            for (long end : new long[] {0, -1, IndexKey.OPEN_RUN_END}) {
                byte[] badEnd = bytes.clone();
                java.nio.ByteBuffer.wrap(badEnd).putLong(1, end);
                assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(key, badEnd))
                        .context()).containsEntry("reason", "an open run ends at an offset in 1.."
                                + (IndexKey.OPEN_RUN_END - 1));
            }
            // an end that breaks the record's own invariants (its start, 100, or below)
            byte[] early = bytes.clone();
            java.nio.ByteBuffer.wrap(early).putLong(1, open.range().start());
            assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(key, early))
                    .context()).containsEntry("reason", "stored fields violate the value's invariants");
        }
        assertThatThrownBy(() -> objectRecord().storedOpen(true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only a generation-0 record of the COMMITTED view is an open run");
    }

    /** A generation-0 record of a run of three appends: format 2, its sections after the fixed fields. */
    private static IndexRecord runRecord() {
        WalTarget run = new WalTarget(5, 900, 3, List.of(
                new WalTarget.Section(7, 0, 104, Checksum.crc32c(0xFFFF_FFFFL)),
                new WalTarget.Section(300, 129, 105, Checksum.crc32c(1))));
        return new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(100, 110), GenerationId.APPEND,
                IndexRecordState.COMMITTED, run, Checksum.crc32c(0x1234), 7, 4096, 0);
    }

    @Test
    void indexRecord_ofARun_roundTripsInFormat2_andBadRunsAreRefused() {
        IndexRecord rec = runRecord();
        IndexKey key = IndexKey.of(rec);
        byte[] bytes = IndexRecordCodec.INSTANCE.encode(rec);
        assertThat(bytes[0]).isEqualTo((byte) 2);
        assertThat(IndexRecordCodec.INSTANCE.decode(key, bytes)).isEqualTo(rec);
        assertThat(rec.walSections()).extracting(WalSectionRef::entryId, WalSectionRef::positionInBatch,
                WalSectionRef::range, WalSectionRef::checksum).containsExactly(
                org.assertj.core.groups.Tuple.tuple(7L, 0, OffsetRange.of(100, 104), Checksum.crc32c(0xFFFF_FFFFL)),
                org.assertj.core.groups.Tuple.tuple(300L, 129, OffsetRange.of(104, 105), Checksum.crc32c(1)),
                org.assertj.core.groups.Tuple.tuple(900L, 3, OffsetRange.of(105, 110), Checksum.crc32c(0x1234)));
        List<WalSectionRef> sections = rec.walSections();
        for (long o = 100; o < 110; o++) {
            long at = o;
            assertThat(rec.walSectionAt(o)).as("offset %s", o).isEqualTo(sections.stream()
                    .filter(w -> w.range().contains(at)).findFirst().orElseThrow());
        }
        assertThat(rec.walSectionAt(110)).as("beyond the run: its first").isEqualTo(sections.get(0));
        assertThat(rec.walSectionCount()).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            assertThat(rec.walSection(i)).as("section %s alone", i).isEqualTo(sections.get(i));
        }
        assertThatThrownBy(() -> rec.walSection(3)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> rec.walSection(-1)).isInstanceOf(IndexOutOfBoundsException.class);
        rejectsEveryTruncation(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b));
        rejectsTrailingBytes(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b));
        rejectsUnknownVersion(bytes, b -> IndexRecordCodec.INSTANCE.decode(key, b), "IndexRecord value", 0, 3, 255);
        byte[] asSingle = bytes.clone();
        asSingle[0] = 1;
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(key, asSingle)).context())
                .containsEntry("reason", "a WAL run needs format 2");
        // the same run stored under a key whose end leaves its last section empty
        IndexKey shorter = new IndexKey(S, ReadView.COMMITTED, 105, GenerationId.APPEND);
        assertThat(violation(() -> IndexRecordCodec.INSTANCE.decode(shorter, bytes), "IndexRecord value"))
                .contains("[100, 105)");
        assertThatThrownBy(() -> new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(100, 105), GenerationId.APPEND,
                IndexRecordState.COMMITTED, rec.target(), Checksum.crc32c(0x1234), 5, 4096, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must end inside");
        assertThatThrownBy(() -> new WalTarget(5, 900, 3, List.of(new WalTarget.Section(901, 0, 104,
                Checksum.crc32c(0))))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("entry order");
    }

    @Test
    void indexRecord_rejectsUnknownTargetKindAndChecksumAndKeyMismatch() {
        IndexRecord rec = walRecord();
        byte[] bytes = IndexRecordCodec.INSTANCE.encode(rec);
        byte[] kind = bytes.clone();
        kind[10] = 7;
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> IndexRecordCodec.INSTANCE.decode(IndexKey.of(rec), kind))
                .context()).containsEntry("reason", "unknown target kind").containsEntry("kind", 7);
        byte[] checksum = bytes.clone();
        checksum[10 + 1 + 20] = 5;
        assertThat(violation(() -> IndexRecordCodec.INSTANCE.decode(IndexKey.of(rec), checksum), "IndexRecord value"))
                .contains("unknown checksum type code 5");
        IndexKey endBeforeStart = new IndexKey(S, ReadView.COMMITTED, 50, GenerationId.APPEND);
        assertThat(violation(() -> IndexRecordCodec.INSTANCE.decode(endBeforeStart, bytes), "IndexRecord value"))
                .contains("end must be >= start");
    }

    @Test
    void catalogEntry_roundTripsAndRejects() {
        CatalogEntry e = new CatalogEntry("tenant/ns/persistent/topic", S, CatalogEntry.MIN_VIRTUAL_LEDGER_ID + 5, 2,
                CatalogState.DELETING);
        byte[] bytes = CatalogEntryCodec.INSTANCE.encode(e);
        assertThat(CatalogEntryCodec.INSTANCE.decode(e.managedLedgerName(), bytes)).isEqualTo(e);
        rejectsEveryTruncation(bytes, b -> CatalogEntryCodec.INSTANCE.decode("x", b));
        rejectsTrailingBytes(bytes, b -> CatalogEntryCodec.INSTANCE.decode("x", b));
        rejectsUnknownVersion(bytes, b -> CatalogEntryCodec.INSTANCE.decode("x", b), "CatalogEntry value of 'x'");
    }

    @Test
    void smallValues_roundTripAndReject() {
        roundTrips(WalIntentCodec.INSTANCE, new WalIntent(123, 4));
        roundTrips(WalSliceCodec.INSTANCE, new WalSlice(WalSliceState.SEALED, "broker-7", 12));
        roundTrips(OffsetRangeCodec.INSTANCE, OffsetRange.of(3, 9));
        roundTrips(OffsetRangeCodec.INSTANCE, OffsetRange.of(0, 0));
        roundTrips(CounterCodec.INSTANCE, 1L << 62);
        roundTrips(GenerationSeqCodec.INSTANCE, GenerationId.of(17));
        rejectsUnknownVersion(WalIntentCodec.INSTANCE.encode(new WalIntent(1, 1)), WalIntentCodec.INSTANCE::decode, "WalIntent");
        rejectsUnknownVersion(CounterCodec.INSTANCE.encode(5L), CounterCodec.INSTANCE::decode, "Counter");
        rejectsUnknownVersion(GenerationSeqCodec.INSTANCE.encode(GenerationId.of(1)), GenerationSeqCodec.INSTANCE::decode, "GenerationSeq");
        rejectsUnknownVersion(WalSliceCodec.INSTANCE.encode(new WalSlice(WalSliceState.OPEN, "b", 1)), WalSliceCodec.INSTANCE::decode, "WalSlice");
        rejectsUnknownVersion(OffsetRangeCodec.INSTANCE.encode(OffsetRange.of(1, 2)), OffsetRangeCodec.INSTANCE::decode, "OffsetRange");
        byte[] negativeGen = GenerationSeqCodec.INSTANCE.encode(GenerationId.of(1));
        negativeGen[1] = (byte) 0x80;
        assertThat(violation(() -> GenerationSeqCodec.INSTANCE.decode(negativeGen), "GenerationSeq"))
                .contains("generation id must be >= 0");
        assertThatThrownBy(() -> CounterCodec.INSTANCE.encode(-1L)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void walSliceAndLease_roundTripAndRejectBrokenInvariants() {
        roundTrips(WalWriterLeaseCodec.INSTANCE, new WalWriterLease("nereus-10.0.0.1-x", 41, Duration.ofSeconds(30)));
        rejectsUnknownVersion(WalWriterLeaseCodec.INSTANCE.encode(new WalWriterLease("b", 0, Duration.ofMillis(1))),
                WalWriterLeaseCodec.INSTANCE::decode, "WalWriterLease");
        byte[] slice = WalSliceCodec.INSTANCE.encode(new WalSlice(WalSliceState.OPEN, "b", 1));
        slice[slice.length - 1] = 0;
        assertThat(violation(() -> WalSliceCodec.INSTANCE.decode(slice), "WalSlice"))
                .contains("incarnation must be > 0");
        byte[] lease = WalWriterLeaseCodec.INSTANCE.encode(new WalWriterLease("b", 0, Duration.ofMillis(1)));
        lease[lease.length - 1] = 0;
        assertThat(violation(() -> WalWriterLeaseCodec.INSTANCE.decode(lease), "WalWriterLease"))
                .contains("at least 1 ms");
        assertThatThrownBy(() -> new WalWriterLease("b", -1, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new WalWriterLease("b", 4, Duration.ofSeconds(1)).renewed().beat()).isEqualTo(5);
    }

    @Test
    void ledgerProperties_roundTripDeterministicallyAndReject() {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < 50; i++) {
            m.put("key-" + i, "välue-" + i);
        }
        m.put("", "");
        LedgerProperties props = new LedgerProperties(m);
        roundTrips(LedgerPropertiesCodec.INSTANCE, props);
        roundTrips(LedgerPropertiesCodec.INSTANCE, LedgerProperties.empty());
        assertThat(LedgerPropertiesCodec.INSTANCE.encode(new LedgerProperties(new HashMap<>(m))))
                .isEqualTo(LedgerPropertiesCodec.INSTANCE.encode(props));
        rejectsUnknownVersion(LedgerPropertiesCodec.INSTANCE.encode(props), LedgerPropertiesCodec.INSTANCE::decode, "LedgerProperties");
    }

    @Test
    void ledgerProperties_rejectsDuplicateOrUnsortedKeysAndBadUtf8() {
        // format 1, count 2, "b" -> "", "a" -> ""
        byte[] unsorted = {1, 2, 1, 'b', 0, 1, 'a', 0};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> LedgerPropertiesCodec.INSTANCE.decode(unsorted)).context())
                .containsEntry("reason", "keys must be sorted and unique").containsEntry("key", 1);
        byte[] duplicate = {1, 2, 1, 'a', 0, 1, 'a', 0};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> LedgerPropertiesCodec.INSTANCE.decode(duplicate)).context())
                .containsEntry("reason", "keys must be sorted and unique").containsEntry("key", 1);
        byte[] badUtf8 = {1, 1, 1, (byte) 0xC3, 0};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> LedgerPropertiesCodec.INSTANCE.decode(badUtf8)).context())
                .containsEntry("reason", "not valid UTF-8");
        byte[] hugeCount = {1, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> LedgerPropertiesCodec.INSTANCE.decode(hugeCount)).context())
                .containsEntry("reason", "truncated").containsEntry("field", "count");
    }

    @Test
    void strings_decodeExactlyWhateverWasDecodedBefore() {
        // the reader remembers the last string it decoded and reuses it for the same bytes: values of the same
        // length but other bytes, multi-byte UTF-8 and invalid UTF-8 must never be served from that memory
        StreamHead a = new StreamHead(StreamState.OPEN, 10, 0, 7, 3, Optional.of("writer-a"), 100);
        StreamHead b = new StreamHead(StreamState.OPEN, 10, 0, 7, 3, Optional.of("writer-b"), 100);
        StreamHead accented = new StreamHead(StreamState.OPEN, 10, 0, 7, 3, Optional.of("wr\u00eeter"), 100);
        for (int round = 0; round < 2; round++) {
            assertThat(StreamHeadCodec.INSTANCE.decode(StreamHeadCodec.INSTANCE.encode(a))).isEqualTo(a);
            assertThat(StreamHeadCodec.INSTANCE.decode(StreamHeadCodec.INSTANCE.encode(a))).isEqualTo(a);
            assertThat(StreamHeadCodec.INSTANCE.decode(StreamHeadCodec.INSTANCE.encode(b))).isEqualTo(b);
            assertThat(StreamHeadCodec.INSTANCE.decode(StreamHeadCodec.INSTANCE.encode(accented))).isEqualTo(accented);
        }
        byte[] good = StreamHeadCodec.INSTANCE.encode(accented);
        byte[] bad = good.clone();
        bad[bad.length - 1] = (byte) 0xC3; // a lead byte with nothing after it, same length as the string just decoded
        assertThat(StreamHeadCodec.INSTANCE.decode(good)).isEqualTo(accented);
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> StreamHeadCodec.INSTANCE.decode(bad)).context())
                .containsEntry("reason", "not valid UTF-8");
    }

    @Test
    void ledgerProperties_overValueLimitIsRefusedOnEncode() {
        LedgerProperties big = new LedgerProperties(Map.of("k", "x".repeat(FdbLimits.MAX_VALUE_BYTES)));
        assertThatThrownBy(() -> LedgerPropertiesCodec.INSTANCE.encode(big))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("LedgerProperties value").hasMessageContaining("100000-byte value limit");
    }

    @Test
    void varint_overlongIsRefused() {
        byte[] overlong = new byte[13];
        overlong[0] = 1;
        for (int i = 1; i < overlong.length; i++) {
            overlong[i] = (byte) 0x80;
        }
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> LedgerPropertiesCodec.INSTANCE.decode(overlong)).context())
                .containsEntry("reason", "varint longer than 10 bytes");
    }
}
