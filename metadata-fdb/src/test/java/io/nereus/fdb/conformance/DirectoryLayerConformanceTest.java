package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import java.math.BigInteger;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The fdb-java layers on top of the Database interface: DirectoryLayer (which drives runAsync/readAsync, snapshot
 * range reads, the ADD-based high-contention allocator and next_write_no_write_conflict_range), Tuple and Subspace.
 */
class DirectoryLayerConformanceTest extends ConformanceTestBase {

    /** A directory layer whose metadata and contents live inside this test's space. */
    private DirectoryLayer privateLayer() {
        return new DirectoryLayer(space.get("nodes"), space.get("content"));
    }

    @Test
    void defaultLayer_createOrOpenListAndRemove_roundTrip() {
        DirectoryLayer layer = DirectoryLayer.getDefault();
        List<String> root = List.of("nereus-conformance", UUID.randomUUID().toString());
        try {
            DirectorySubspace created = await(layer.createOrOpen(db, root));
            DirectorySubspace reopened = await(layer.createOrOpen(db, root));
            assertThat(reopened.getKey()).isEqualTo(created.getKey());
            assertThat(created.getPath()).isEqualTo(root);

            await(layer.createOrOpen(db, List.of(root.get(0), root.get(1), "b")));
            await(layer.createOrOpen(db, List.of(root.get(0), root.get(1), "a")));
            assertThat(await(layer.list(db, root))).containsExactly("a", "b");
            assertThat(await(layer.exists(db, root))).isTrue();

            await(layer.remove(db, root));
            assertThat(await(layer.exists(db, root))).isFalse();
        } finally {
            await(layer.removeIfExists(db, root));
        }
    }

    @Test
    void directories_getDistinctPrefixes_andHoldData() {
        DirectoryLayer layer = privateLayer();
        DirectorySubspace one = await(layer.createOrOpen(db, List.of("one")));
        DirectorySubspace two = await(layer.createOrOpen(db, List.of("two")));
        assertThat(ByteArrayUtil.startsWith(one.getKey(), two.getKey())).isFalse();
        assertThat(ByteArrayUtil.startsWith(two.getKey(), one.getKey())).isFalse();

        try (Transaction tr = db.createTransaction()) {
            tr.set(one.pack(Tuple.from("k", 1L)), utf8("in one"));
            tr.set(two.pack(Tuple.from("k", 1L)), utf8("in two"));
            await(tr.commit());
        }

        try (Transaction tr = db.createTransaction()) {
            List<KeyValue> rows = await(tr.getRange(one.range()).asList());
            assertThat(rows).hasSize(1);
            assertThat(one.unpack(rows.get(0).getKey()).getItems()).isEqualTo(Tuple.from("k", 1L).getItems());
            assertThat(str(rows.get(0).getValue())).isEqualTo("in one");
        }
    }

    @Test
    void directories_createdConcurrentlyInOneTransactionEach_allSurvive() {
        DirectoryLayer layer = privateLayer();
        List<java.util.concurrent.CompletableFuture<DirectorySubspace>> futures = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            futures.add(layer.createOrOpen(db, List.of("dir-" + i)));
        }
        for (var f : futures) {
            await(f);
        }

        assertThat(await(layer.list(db))).hasSize(8);
    }

    @Test
    void directory_move_keepsPrefixAndContents() {
        DirectoryLayer layer = privateLayer();
        DirectorySubspace from = await(layer.createOrOpen(db, List.of("from")));
        putRaw(from.pack(Tuple.from("x")), utf8("kept"));

        DirectorySubspace moved = await(layer.move(db, List.of("from"), List.of("to")));

        assertThat(moved.getKey()).isEqualTo(from.getKey());
        assertThat(await(layer.list(db))).containsExactly("to");
        assertThat(str(getRaw(moved.pack(Tuple.from("x"))))).isEqualTo("kept");
    }

    @Test
    void tuple_packAndUnpack_roundTripAllCommonTypes() {
        Tuple t = Tuple.from("text", 42L, -7L, new byte[] {0, 1, (byte) 0xff}, null, true, 1.5d, 2.5f,
                UUID.fromString("12345678-1234-1234-1234-123456789abc"), BigInteger.TWO.pow(70),
                Tuple.from("nested", 1L), Versionstamp.complete(new byte[10], 5));

        assertThat((Object) Tuple.fromBytes(t.pack())).isEqualTo(t);
    }

    @Test
    void tuple_packedOrder_matchesTupleOrder() {
        // Type codes order first (byte strings 0x01 < strings 0x02 < integers 0x0c..0x1c), then values.
        List<Tuple> sorted = List.of(Tuple.from(new byte[] {5}), Tuple.from("a"), Tuple.from("a", 1L),
                Tuple.from("b"), Tuple.from(-1000L), Tuple.from(-1L), Tuple.from(0L), Tuple.from(1L),
                Tuple.from(1000L));
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(ByteArrayUtil.compareUnsigned(sorted.get(i - 1).pack(), sorted.get(i).pack()))
                    .as("%s < %s", sorted.get(i - 1), sorted.get(i)).isNegative();
        }
    }

    @Test
    void subspace_packUnpackContainsAndRange_roundTrip() {
        Subspace sub = space.get("users").get(7L);
        byte[] key = sub.pack(Tuple.from("name"));

        assertThat(sub.contains(key)).isTrue();
        assertThat(space.contains(key)).isTrue();
        assertThat((Object) sub.unpack(key)).isEqualTo(Tuple.from("name"));
        assertThat((Object) space.unpack(key)).isEqualTo(Tuple.from("users", 7L, "name"));
        assertThat(ByteArrayUtil.compareUnsigned(sub.range().begin, key)).isNegative();
        assertThat(ByteArrayUtil.compareUnsigned(key, sub.range().end)).isNegative();
    }

    @Test
    void tupleKeys_storedAndRangeRead_comeBackInTupleOrder() {
        Subspace events = space.get("events");
        try (Transaction tr = db.createTransaction()) {
            for (long i : new long[] {300L, -5L, 7L, 0L}) {
                tr.set(events.pack(Tuple.from(i)), Tuple.from(i * 2).pack());
            }
            await(tr.commit());
        }

        try (Transaction tr = db.createTransaction()) {
            List<KeyValue> rows = await(tr.getRange(events.range()).asList());
            assertThat(rows).extracting(kv -> events.unpack(kv.getKey()).getLong(0)).containsExactly(-5L, 0L, 7L, 300L);
            assertThat(rows).extracting(kv -> Tuple.fromBytes(kv.getValue()).getLong(0))
                    .containsExactly(-10L, 0L, 14L, 600L);
        }
    }
}
