package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncIterable;
import com.apple.foundationdb.async.AsyncIterator;
import io.nereus.fdb.FdbErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** getRange: bounds, laziness, limits, reverse, streaming modes (fdb-semantics §4.6 items 7 and 13). */
class RangeReadConformanceTest extends ConformanceTestBase {

    private static String key3(int i) {
        return String.format("r%03d", i);
    }

    private void putNumbered(int count, int valueBytes) {
        Transaction tr = newTransaction();
        for (int i = 0; i < count; i++) {
            tr.set(k(key3(i)), filled(valueBytes, 'a' + i % 26));
        }
        await(tr.commit());
    }

    private List<String> expectedNumbered(int fromInclusive, int toExclusive, boolean reverse) {
        List<String> out = new ArrayList<>();
        for (int i = fromInclusive; i < toExclusive; i++) {
            out.add(key3(i));
        }
        if (reverse) {
            java.util.Collections.reverse(out);
        }
        return out;
    }

    /**
     * next() past the end fails with NoSuchElementException; fdb-java's RangeQuery throws it from inside a
     * CompletableFuture.join(), so it arrives wrapped in a CompletionException there.
     */
    private static void assertNoSuchElement(AsyncIterator<KeyValue> it) {
        assertThatThrownBy(it::next).matches(RangeReadConformanceTest::isNoSuchElement, "NoSuchElementException");
    }

    private static boolean isNoSuchElement(Throwable t) {
        return t instanceof NoSuchElementException || t.getCause() instanceof NoSuchElementException;
    }

    @Test
    void getRange_byteArrays_isBeginInclusiveEndExclusive() {
        putAll("a", "b", "c", "d");
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.getRange(k("b"), k("d")).asList()))).containsExactly("b", "c");
        assertThat(suffixes(await(tr.getRange(k("b"), k("c\u0000")).asList()))).containsExactly("b", "c");
    }

    @Test
    void getRange_returnsKeysInUnsignedByteOrder() {
        try (Transaction tr = db.createTransaction()) {
            tr.set(space.pack(bytes(0x7f)), utf8("x"));
            tr.set(space.pack(bytes(0x80)), utf8("x"));
            tr.set(space.pack(bytes(0x00)), utf8("x"));
            tr.set(space.pack(bytes(0xff)), utf8("x"));
            await(tr.commit());
        }

        List<KeyValue> rows = readSpace();
        assertThat(rows).extracting(kv -> space.unpack(kv.getKey()).getBytes(0)[0] & 0xff)
                .containsExactly(0x00, 0x7f, 0x80, 0xff);
    }

    @Test
    void getRange_isLazy_readsNothingUntilIterated() {
        Transaction tr = newTransaction();
        AsyncIterable<KeyValue> range = tr.getRange(spaceRange());
        put("a", "committed-after-getRange-call");

        assertThat(suffixes(await(range.asList())))
                .as("the read version is taken when the range is first iterated")
                .containsExactly("a");
    }

    @Test
    void getRange_eachNewIteration_readsAgain() {
        putAll("a");
        Transaction tr = newTransaction();
        AsyncIterable<KeyValue> range = tr.getRange(spaceRange());
        assertThat(suffixes(await(range.asList()))).containsExactly("a");

        tr.set(k("b"), utf8("own"));

        assertThat(suffixes(await(range.asList()))).containsExactly("a", "b");
        List<String> viaIterator = new ArrayList<>();
        AsyncIterator<KeyValue> it = range.iterator();
        while (it.hasNext()) {
            viaIterator.add(suffix(it.next().getKey()));
        }
        assertThat(viaIterator).containsExactly("a", "b");
    }

    @Test
    void getRange_limit_returnsTheFirstRows() {
        putNumbered(10, 4);
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.getRange(spaceRange(), 3).asList())))
                .containsExactlyElementsOf(expectedNumbered(0, 3, false));
    }

    @Test
    void getRange_reverseWithLimit_returnsTheLastRowsDescending() {
        putNumbered(10, 4);
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.getRange(spaceRange(), 3, true).asList())))
                .containsExactlyElementsOf(expectedNumbered(7, 10, true));
    }

    @Test
    void getRange_reverseUnlimited_returnsAllRowsDescending() {
        putNumbered(10, 4);
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.getRange(spaceRange(), ReadTransaction.ROW_LIMIT_UNLIMITED, true).asList())))
                .containsExactlyElementsOf(expectedNumbered(0, 10, true));
    }

    @Test
    void getRange_limitZero_meansUnlimited_andLimitAboveRowCountReturnsAll() {
        putNumbered(10, 4);
        Transaction tr = newTransaction();

        assertThat(await(tr.getRange(spaceRange(), 0).asList())).hasSize(10);
        assertThat(await(tr.getRange(spaceRange(), 1000).asList())).hasSize(10);
    }

    @Test
    void getRange_iterator_withLimit_stopsAtTheLimit() {
        putNumbered(10, 4);
        Transaction tr = newTransaction();
        AsyncIterator<KeyValue> it = tr.getRange(spaceRange(), 4).iterator();
        List<String> seen = new ArrayList<>();
        while (it.hasNext()) {
            seen.add(suffix(it.next().getKey()));
        }

        assertThat(seen).containsExactlyElementsOf(expectedNumbered(0, 4, false));
        assertNoSuchElement(it);
    }

    /** Streaming modes only change batching; every mode (EXACT with a limit) returns the same rows. */
    @ParameterizedTest
    @EnumSource(StreamingMode.class)
    void getRange_everyStreamingMode_returnsTheSameRows(StreamingMode mode) {
        putNumbered(300, 300);
        Transaction tr = newTransaction();
        int limit = mode == StreamingMode.EXACT ? 300 : 0;

        assertThat(suffixes(await(tr.getRange(spaceRange(), limit, false, mode).asList())))
                .containsExactlyElementsOf(expectedNumbered(0, 300, false));
        assertThat(suffixes(await(tr.getRange(spaceRange(), 250, true, mode).asList())))
                .containsExactlyElementsOf(expectedNumbered(50, 300, true));

        List<String> viaIterator = new ArrayList<>();
        AsyncIterator<KeyValue> it = tr.getRange(spaceRange(), 120, false, mode).iterator();
        while (it.hasNext()) {
            viaIterator.add(suffix(it.next().getKey()));
        }
        assertThat(viaIterator).containsExactlyElementsOf(expectedNumbered(0, 120, false));
    }

    @Test
    void getRange_manyRowsInIteratorMode_areAllReturnedInOrderAcrossBatches() {
        putNumbered(900, 200);
        Transaction tr = newTransaction();
        List<String> seen = new ArrayList<>();
        AsyncIterator<KeyValue> it = tr.getRange(spaceRange()).iterator();
        while (it.hasNext()) {
            seen.add(suffix(it.next().getKey()));
        }

        assertThat(seen).containsExactlyElementsOf(expectedNumbered(0, 900, false));
    }

    @Test
    void getRange_exactModeWithoutLimit_failsExactModeWithoutLimits2210() {
        putNumbered(3, 4);
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.EXACT_MODE_WITHOUT_LIMITS,
                () -> await(tr.getRange(spaceRange(), 0, false, StreamingMode.EXACT).asList()));
        assertFdbError(FdbErrors.EXACT_MODE_WITHOUT_LIMITS,
                () -> tr.getRange(spaceRange(), 0, false, StreamingMode.EXACT).iterator().hasNext());
    }

    @Test
    void getRange_negativeLimit_failsRangeLimitsInvalid2012() {
        putNumbered(3, 4);
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.RANGE_LIMITS_INVALID, () -> await(tr.getRange(spaceRange(), -2).asList()));
        assertFdbError(FdbErrors.RANGE_LIMITS_INVALID,
                () -> tr.getRange(spaceRange(), -5, false, StreamingMode.WANT_ALL).iterator().hasNext());
    }

    /**
     * -1 is the native layer's "unlimited" (GetRangeLimits::isValid). Read with WANT_ALL: with the default
     * ITERATOR mode, RangeQuery.asList() turns a non-zero limit into EXACT, and EXACT without limits is 2210.
     */
    @Test
    void getRange_limitMinusOne_isAcceptedAsUnlimited() {
        putNumbered(5, 4);
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.getRange(spaceRange(), -1, false, StreamingMode.WANT_ALL).asList())))
                .containsExactlyElementsOf(expectedNumbered(0, 5, false));
    }

    @Test
    void getRange_beginAtOrAfterEnd_isEmptyNotAnError() {
        putAll("a", "b", "c");
        Transaction tr = newTransaction();

        assertThat(await(tr.getRange(k("c"), k("a")).asList())).isEmpty();
        assertThat(await(tr.getRange(k("b"), k("b")).asList())).isEmpty();
        assertThat(await(tr.getRange(KeySelector.firstGreaterThan(k("b")), KeySelector.firstGreaterOrEqual(k("b")))
                .asList())).isEmpty();
    }

    @Test
    void getRange_keySelectors_resolveBothEnds() {
        putAll("a", "b", "c", "d", "e");
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.getRange(KeySelector.firstGreaterThan(k("b")),
                KeySelector.firstGreaterThan(k("d"))).asList()))).containsExactly("c", "d");
        assertThat(suffixes(await(tr.getRange(KeySelector.firstGreaterOrEqual(k("a")).add(1),
                KeySelector.lastLessOrEqual(k("d"))).asList()))).containsExactly("b", "c");
        assertThat(suffixes(await(tr.getRange(KeySelector.firstGreaterOrEqual(k("a")).add(1),
                KeySelector.firstGreaterOrEqual(k("a")).add(4), 2, true).asList()))).containsExactly("d", "c");
    }

    @Test
    void getRange_rangeOverloads_matchByteArrayOverloads() {
        putNumbered(6, 4);
        Transaction tr = newTransaction();
        var range = spaceRange();

        assertThat(suffixes(await(tr.getRange(range, 2, true).asList())))
                .isEqualTo(suffixes(await(tr.getRange(range.begin, range.end, 2, true).asList())))
                .containsExactlyElementsOf(expectedNumbered(4, 6, true));
        assertThat(suffixes(await(tr.getRange(range, 2, false, StreamingMode.SMALL).asList())))
                .containsExactlyElementsOf(expectedNumbered(0, 2, false));
    }

    @Test
    void iterator_onHasNextAndNext_walkRowsThenReportTheEnd() {
        putAll("a", "b");
        Transaction tr = newTransaction();
        AsyncIterator<KeyValue> it = tr.getRange(spaceRange()).iterator();

        assertThat(await(it.onHasNext())).isTrue();
        assertThat(suffix(it.next().getKey())).isEqualTo("a");
        assertThat(await(it.onHasNext())).isTrue();
        assertThat(suffix(it.next().getKey())).isEqualTo("b");
        assertThat(await(it.onHasNext())).isFalse();
        assertThat(it.hasNext()).isFalse();
        assertNoSuchElement(it);
    }

    @Test
    void iterator_cancel_stopsIteration() {
        putNumbered(10, 4);
        Transaction tr = newTransaction();
        AsyncIterator<KeyValue> it = tr.getRange(spaceRange()).iterator();
        assertThat(suffix(it.next().getKey())).isEqualTo(key3(0));

        it.cancel();

        assertThatThrownBy(it::next).matches(t -> t instanceof CancellationException || isNoSuchElement(t),
                "CancellationException or NoSuchElementException");
    }

    @Test
    void getRange_snapshotView_returnsTheSameRows() {
        putNumbered(5, 4);
        Transaction tr = newTransaction();

        assertThat(suffixes(await(tr.snapshot().getRange(spaceRange(), 3, true).asList())))
                .containsExactlyElementsOf(expectedNumbered(2, 5, true));
    }
}
