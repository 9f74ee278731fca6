package io.nereus.pulsar.cursor;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.CursorState;
import io.nereus.metadata.CursorStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.ScanOutcome;
import org.apache.bookkeeper.mledger.impl.AckSetStateUtil;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** NereusManagedCursor over a real stream: in-process BookKeeper WAL, EmbeddedFdb metadata. */
class NereusManagedCursorTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));
    private static final long L = CursorTestHost.LEDGER_ID;

    private EngineFixture engine;
    private StreamStorage storage;
    private CursorStore cursorStore;
    private CursorTestHost host;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "cursor");
        storage = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
        cursorStore = engine.metadata.cursors();
        NereusStream stream = await(storage.openStream("persistent://tenant/ns/cursor-test"));
        host = new CursorTestHost(stream, cursorStore);
    }

    @AfterEach
    void tearDown() {
        host.close();
        engine.close();
    }

    private NereusManagedCursor open(String name, InitialPosition initial) {
        return await(NereusManagedCursor.openDurable(host, name, initial, Map.of(), Map.of()));
    }

    private static Position pos(long offset) {
        return PositionFactory.create(L, offset);
    }

    /** The payloads of {@code entries}, releasing them. */
    private static List<String> payloads(List<Entry> entries) {
        List<String> out = new ArrayList<>();
        for (Entry e : entries) {
            out.add(new String(e.getData(), StandardCharsets.UTF_8));
            e.release();
        }
        return out;
    }

    private static CompletableFuture<List<Entry>> readOrWait(ManagedCursor c, int n) {
        return readOrWait(c, n, PositionFactory.LATEST);
    }

    private static CompletableFuture<List<Entry>> readOrWait(ManagedCursor c, int n, Position maxPosition) {
        CompletableFuture<List<Entry>> f = new CompletableFuture<>();
        c.asyncReadEntriesOrWait(n, new AsyncCallbacks.ReadEntriesCallback() {
            @Override
            public void readEntriesComplete(List<Entry> entries, Object ctx) {
                f.complete(entries);
            }

            @Override
            public void readEntriesFailed(ManagedLedgerException exception, Object ctx) {
                f.completeExceptionally(exception);
            }
        }, null, maxPosition);
        return f;
    }

    private static void assertFailsWith(CompletableFuture<?> f, Class<? extends Throwable> type) {
        assertThat(f).failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(type);
    }

    private CursorState stored(String name) {
        return await(cursorStore.loadCursor(host.streamId(), name)).orElseThrow();
    }

    @Test
    void openDurable_newAtEarliestAndLatest_savedAtFirstOffsetAndEnd() {
        host.appendNumbered(3);
        NereusManagedCursor earliest = open("e", InitialPosition.Earliest);
        NereusManagedCursor latest = open("l", InitialPosition.Latest);
        assertThat(earliest.getMarkDeletedPosition()).isEqualTo(pos(-1));
        assertThat(earliest.getReadPosition()).isEqualTo(pos(0));
        assertThat(latest.getReadPosition()).isEqualTo(pos(3));
        assertThat(stored("e").markDeleteEnd()).isZero();
        assertThat(stored("l").markDeleteEnd()).isEqualTo(3);
        assertThat(latest.getNumberOfEntriesInBacklog(true)).isZero();
        assertThat(earliest.getNumberOfEntriesInBacklog(true)).isEqualTo(3);
    }

    @Test
    void readEntries_afterAppends_returnsInOrderAndAdvancesReadPosition() throws Exception {
        host.appendNumbered(5);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThat(payloads(c.readEntries(3))).containsExactly("0", "1", "2");
        assertThat(c.getReadPosition()).isEqualTo(pos(3));
        assertThat(c.getNumberOfEntries()).isEqualTo(2);
        assertThat(payloads(c.readEntries(10))).containsExactly("3", "4");
        assertThat(c.hasMoreEntries()).isFalse();
        assertThat(c.readEntries(10)).isEmpty();
    }

    @Test
    void delete_individualAcks_mergeIntoMarkDeleteAndRewindRedeliversRest() throws Exception {
        host.appendNumbered(6);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        payloads(c.readEntries(6));
        c.delete(List.of(pos(1), pos(2), pos(4)));
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(-1));
        assertThat(c.getTotalNonContiguousDeletedMessagesRange()).isEqualTo(2);
        assertThat(c.isMessageDeleted(pos(2))).isTrue();
        assertThat(c.isMessageDeleted(pos(3))).isFalse();
        assertThat(c.getNumberOfEntriesInBacklog(true)).isEqualTo(3);

        c.rewind();
        assertThat(payloads(c.readEntries(10))).containsExactly("0", "3", "5");

        c.delete(pos(0));
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(2));
        assertThat(c.getCursorStats().individuallyDeletedMessages).isEqualTo("[(" + L + ":3.." + L + ":4]]");
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(3);
        assertThat(stored("sub").individuallyDeleted()).containsExactly(OffsetRange.single(4));
        assertThat(host.markDeleteMoves).contains(c);
    }

    @Test
    void delete_batchIndexes_partialKeepsEntryAndFullAckDeletesIt() throws Exception {
        host.appendNumbered(3);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        BitSet unacked = new BitSet();
        unacked.set(0, 4); // batch of 4 messages, nothing acknowledged
        unacked.clear(1);
        c.delete(AckSetStateUtil.createPositionWithAckSet(L, 1, unacked.toLongArray()));
        assertThat(c.isMessageDeleted(pos(1))).isFalse();
        assertThat(BitSet.valueOf(c.getDeletedBatchIndexesAsLongArray(pos(1)))).isEqualTo(unacked);
        assertThat(stored("sub").batchAckSets()).containsKey(1L);

        c.delete(AckSetStateUtil.createPositionWithAckSet(L, 1, new long[] {0L}));
        assertThat(c.isMessageDeleted(pos(1))).isTrue();
        assertThat(c.getDeletedBatchIndexesAsLongArray(pos(1))).isNull();
        assertThat(payloads(c.readEntries(10))).containsExactly("0", "2");
    }

    @Test
    void close_thenReopen_restoresMarkDeleteRangesBatchSetsAndProperties() throws Exception {
        host.appendNumbered(10);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.markDelete(pos(2), Map.of("snapshot", 7L));
        c.delete(List.of(pos(5), pos(6), pos(8)));
        c.delete(AckSetStateUtil.createPositionWithAckSet(L, 4, new long[] {0b1010L}));
        await(c.putCursorProperty("origin", "test"));
        c.close();
        assertThat(c.isClosed()).isTrue();
        assertThat(host.closedCursors).contains(c);

        NereusManagedCursor back = open("sub", InitialPosition.Latest);
        assertThat(back.getMarkDeletedPosition()).isEqualTo(pos(2));
        assertThat(back.getPersistentMarkDeletedPosition()).isEqualTo(pos(2));
        assertThat(back.getCursorStats().individuallyDeletedMessages)
                .isEqualTo("[(" + L + ":4.." + L + ":6],(" + L + ":7.." + L + ":8]]");
        assertThat(back.getDeletedBatchIndexesAsLongArray(pos(4))).containsExactly(0b1010L);
        assertThat(back.getProperties()).containsEntry("snapshot", 7L);
        assertThat(back.getCursorProperties()).containsEntry("origin", "test");
        assertThat(payloads(back.readEntries(10))).containsExactly("3", "4", "7", "9");
    }

    @Test
    void markDelete_beyondLastConfirmed_failsInvalidCursorPosition() throws Exception {
        host.appendNumbered(2);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThatThrownBy(() -> c.markDelete(pos(2)))
                .isInstanceOf(ManagedLedgerException.InvalidCursorPositionException.class)
                .hasMessageContaining(pos(2).toString());
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(-1));
    }

    @Test
    void markDelete_olderThanCurrent_completesWithoutChange() throws Exception {
        host.appendNumbered(5);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.markDelete(pos(3));
        c.markDelete(pos(1));
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(3));
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(4);
        assertThat(c.getReadPosition()).isEqualTo(pos(4));
    }

    @Test
    void markDelete_throttled_completesAtOnceAndCloseFlushesIt() throws Exception {
        host.appendNumbered(5);
        host.config.setThrottleMarkDelete(0.001); // one save per 1000 s; opening saved once already
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.markDelete(pos(3));
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(3));
        assertThat(c.persistedMarkDeleteEnd()).isZero();
        assertThat(stored("sub").markDeleteEnd()).isZero();
        c.close();
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(4);
        assertThat(c.persistedMarkDeleteEnd()).isEqualTo(4);
        assertThat(c.getStats().getPersistZookeeperSucceed()).isEqualTo(2);
    }

    @Test
    void markDelete_afterAnotherWriterTookOver_failsFenced() throws Exception {
        host.appendNumbered(3);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        StreamStorage other = engine.storage("broker-b", StorageConfig.defaults().withWal(WAL));
        await(await(other.openStream("persistent://tenant/ns/cursor-test")).acquireWriter());

        assertThatThrownBy(() -> c.markDelete(pos(1)))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
        assertThatThrownBy(() -> c.delete(pos(2)))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
        assertThat(stored("sub").markDeleteEnd()).isZero();
        assertThat(c.getStats().getPersistZookeeperErrors()).isEqualTo(1);
    }

    @Test
    void readEntriesOrWait_nothingToRead_completedByAppend() {
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<List<Entry>> parked = readOrWait(c, 10);
        assertThat(parked).isNotDone();
        assertThat(c.hasPendingReadRequest()).isTrue();
        host.append("hello");
        assertThat(payloads(await(parked))).containsExactly("hello");
        assertThat(c.getReadPosition()).isEqualTo(pos(1));
        assertThat(c.hasPendingReadRequest()).isFalse();
    }

    @Test
    void readEntriesOrWait_heldBackByMaxPosition_completesEmptyAfterTheCheckDelay() {
        host.appendNumbered(3);
        host.config.setNewEntriesCheckDelayInMillis(1000);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<List<Entry>> heldBack = readOrWait(c, 10, PositionFactory.EARLIEST);
        assertThat(heldBack).as("parked until the check delay").isNotDone();
        assertThat(await(heldBack)).as("the caller asks again with its current bound").isEmpty();
        assertThat(c.getReadPosition()).isEqualTo(pos(0));
        assertThat(payloads(await(readOrWait(c, 10, pos(1))))).containsExactly("0", "1");
    }

    @Test
    void readEntriesOrWait_heldBackByMaxPosition_completesEmptyAtTheNextAppend() {
        host.appendNumbered(2);
        host.config.setNewEntriesCheckDelayInMillis(600_000);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThat(payloads(await(readOrWait(c, 10, pos(0))))).containsExactly("0");
        CompletableFuture<List<Entry>> heldBack = readOrWait(c, 10, pos(0));
        assertThat(heldBack).isNotDone();
        host.appendNumbered(1);
        assertThat(await(heldBack)).as("completed by the append, long before the delay").isEmpty();
        assertThat(host.parkedWaiters()).isZero();
        assertThat(payloads(await(readOrWait(c, 10, PositionFactory.LATEST)))).containsExactly("1", "2");
    }

    @Test
    void readEntriesOrWait_heldBackByMaxPositionWithoutCheckDelay_completesEmptyAtOnce() {
        host.appendNumbered(1);
        host.config.setNewEntriesCheckDelayInMillis(0);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThat(await(readOrWait(c, 10, PositionFactory.EARLIEST))).isEmpty();
        assertThat(c.hasPendingReadRequest()).isFalse();
    }

    @Test
    void readEntriesOrWait_secondWhileOneWaits_failsConcurrentWait() {
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<List<Entry>> first = readOrWait(c, 1);
        assertFailsWith(readOrWait(c, 1), ManagedLedgerException.ConcurrentWaitCallbackException.class);
        assertThat(first).isNotDone();
    }

    @Test
    void cancelPendingReadRequest_parkedRead_isNeverCalledBack() {
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<List<Entry>> cancelled = readOrWait(c, 1);
        assertThat(c.cancelPendingReadRequest()).isTrue();
        assertThat(c.cancelPendingReadRequest()).isFalse();
        host.append("a");
        // the next read is served (no concurrent-wait error) and gets the entry the cancelled read never saw
        assertThat(payloads(await(readOrWait(c, 1)))).containsExactly("a");
        assertThat(cancelled).isNotDone();
    }

    @Test
    void readEntriesOrWait_terminatedAtEnd_failsNoMoreEntries() {
        host.appendNumbered(1);
        NereusManagedCursor c = open("sub", InitialPosition.Latest);
        CompletableFuture<List<Entry>> parked = readOrWait(c, 1);
        host.terminate();
        assertFailsWith(parked, ManagedLedgerException.NoMoreEntriesToReadException.class);
        assertFailsWith(readOrWait(c, 1), ManagedLedgerException.NoMoreEntriesToReadException.class);
    }

    @Test
    void close_withParkedRead_failsItCursorAlreadyClosed() {
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<List<Entry>> parked = readOrWait(c, 1);
        await(c.closeAsync());
        assertFailsWith(parked, ManagedLedgerException.CursorAlreadyClosedException.class);
        assertFailsWith(readOrWait(c, 1), ManagedLedgerException.CursorAlreadyClosedException.class);
    }

    @Test
    void ledgerClosed_withParkedRead_failsItWithReasonAndStopsPersisting() {
        host.appendNumbered(2);
        NereusManagedCursor c = open("sub", InitialPosition.Latest);
        CompletableFuture<List<Entry>> parked = readOrWait(c, 1);
        c.ledgerClosed(new ManagedLedgerException.ManagedLedgerFencedException("taken over"));
        assertFailsWith(parked, ManagedLedgerException.ManagedLedgerFencedException.class);
        assertThat(c.isClosed()).isTrue();
    }

    @Test
    void findNewestMatching_prefixCondition_returnsLastMatchOrNull() throws Exception {
        host.appendNumbered(20);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThat(c.findNewestMatching(e -> Integer.parseInt(new String(e.getData(), StandardCharsets.UTF_8)) < 13))
                .isEqualTo(pos(12));
        assertThat(c.findNewestMatching(e -> true)).isEqualTo(pos(19));
        assertThat(c.findNewestMatching(e -> false)).isNull();

        c.markDelete(pos(15));
        assertThat(c.findNewestMatching(ManagedCursor.FindPositionConstraint.SearchActiveEntries,
                e -> Integer.parseInt(new String(e.getData(), StandardCharsets.UTF_8)) < 13)).isNull();
        assertThat(c.findNewestMatching(ManagedCursor.FindPositionConstraint.SearchAllAvailableEntries,
                e -> Integer.parseInt(new String(e.getData(), StandardCharsets.UTF_8)) < 13)).isEqualTo(pos(12));

        CompletableFuture<Position> windowed = new CompletableFuture<>();
        c.asyncFindNewestMatching(ManagedCursor.FindPositionConstraint.SearchAllAvailableEntries, e -> true,
                pos(2), pos(7), new AsyncCallbacks.FindEntryCallback() {
                    @Override
                    public void findEntryComplete(Position position, Object ctx) {
                        windowed.complete(position);
                    }

                    @Override
                    public void findEntryFailed(ManagedLedgerException exception, Optional<Position> failed,
                            Object ctx) {
                        windowed.completeExceptionally(exception);
                    }
                }, null, false);
        assertThat(await(windowed)).isEqualTo(pos(7));
    }

    @Test
    void resetCursor_afterAcks_clearsIndividualAcksAndPersists() throws Exception {
        host.appendNumbered(8);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.markDelete(pos(5));
        c.delete(pos(7));
        c.resetCursor(pos(2));
        assertThat(c.getReadPosition()).isEqualTo(pos(2));
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(1));
        assertThat(c.getTotalNonContiguousDeletedMessagesRange()).isZero();
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(2);
        assertThat(stored("sub").individuallyDeleted()).isEmpty();
        assertThat(payloads(c.readEntries(10))).containsExactly("2", "3", "4", "5", "6", "7");

        c.resetCursor(PositionFactory.LATEST);
        assertThat(c.getNumberOfEntriesInBacklog(true)).isZero();
    }

    @Test
    void skipEntries_excludeDeleted_skipsOverAckedRanges() throws Exception {
        host.appendNumbered(10);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.delete(List.of(pos(1), pos(2)));
        c.skipEntries(2, ManagedCursor.IndividualDeletedEntries.Exclude); // skips 0 and 3
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(3));
        c.skipEntries(2, ManagedCursor.IndividualDeletedEntries.Include); // skips 4 and 5
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(5));
        c.skipEntries(100, ManagedCursor.IndividualDeletedEntries.Include);
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(9));
    }

    @Test
    void clearBacklog_withBacklog_marksDeleteEverything() throws Exception {
        host.appendNumbered(4);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.delete(pos(2));
        c.clearBacklog();
        assertThat(c.getNumberOfEntriesInBacklog(true)).isZero();
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(3));
        assertThat(c.getTotalNonContiguousDeletedMessagesRange()).isZero();
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(4);
    }

    @Test
    void nonDurable_earliestLatestAndPosition_startWhereNonDurableCursorImplDoes() throws Exception {
        host.appendNumbered(6);
        NereusManagedCursor latest = NereusManagedCursor.nonDurable(host, "r1", null, InitialPosition.Latest, false);
        NereusManagedCursor earliest = NereusManagedCursor.nonDurable(host, "r2", PositionFactory.EARLIEST,
                InitialPosition.Latest, false);
        NereusManagedCursor at = NereusManagedCursor.nonDurable(host, "r3", pos(3), InitialPosition.Latest, false);
        NereusManagedCursor beyond = NereusManagedCursor.nonDurable(host, "r4", PositionFactory.LATEST,
                InitialPosition.Earliest, false);
        assertThat(latest.getReadPosition()).isEqualTo(pos(6));
        assertThat(earliest.getReadPosition()).isEqualTo(pos(0));
        assertThat(at.getReadPosition()).isEqualTo(pos(4));
        assertThat(at.getMarkDeletedPosition()).isEqualTo(pos(3));
        assertThat(beyond.getReadPosition()).isEqualTo(pos(0));
        assertThat(at.isDurable()).isFalse();

        at.markDelete(pos(4));
        assertThat(at.persistedMarkDeleteEnd()).isEqualTo(5);
        assertThat(payloads(at.readEntries(10))).containsExactly("5");
        assertThat(await(cursorStore.listCursors(host.streamId()))).doesNotContain("r3");
        assertThat(await(latest.closeAsync())).isNull();
    }

    @Test
    void scan_conditionFailsOrEnd_reportsUserInterruptedOrCompleted() {
        host.appendNumbered(12);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        List<String> seen = new ArrayList<>();
        ScanOutcome interrupted = await(c.scan(Optional.empty(), e -> {
            String s = new String(e.getData(), StandardCharsets.UTF_8);
            seen.add(s);
            return !s.equals("7");
        }, 5, 100, 60_000));
        assertThat(interrupted).isEqualTo(ScanOutcome.USER_INTERRUPTED);
        assertThat(seen).containsExactly("0", "1", "2", "3", "4", "5", "6", "7");
        assertThat(await(c.scan(Optional.empty(), e -> true, 5, 100, 60_000))).isEqualTo(ScanOutcome.COMPLETED);
        assertThat(await(c.scan(Optional.empty(), e -> true, 5, 3, 60_000))).isEqualTo(ScanOutcome.ABORTED);
    }

    @Test
    void replayEntries_someAcked_returnsAckedPositionsAndReadsRest() throws Exception {
        host.appendNumbered(6);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.markDelete(pos(1));
        c.delete(pos(4));
        CompletableFuture<List<Entry>> read = new CompletableFuture<>();
        Set<? extends Position> skipped = c.asyncReplayEntries(Set.of(pos(0), pos(3), pos(4), pos(5)),
                new AsyncCallbacks.ReadEntriesCallback() {
                    @Override
                    public void readEntriesComplete(List<Entry> entries, Object ctx) {
                        read.complete(entries);
                    }

                    @Override
                    public void readEntriesFailed(ManagedLedgerException exception, Object ctx) {
                        read.completeExceptionally(exception);
                    }
                }, null, true);
        assertThat(new java.util.HashSet<Position>(skipped)).containsExactlyInAnyOrder(pos(0), pos(4));
        assertThat(payloads(await(read))).containsExactly("3", "5");
    }

    @Test
    void getNthEntry_excludeDeleted_countsOnlyUnacked() throws Exception {
        host.appendNumbered(6);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.delete(List.of(pos(0), pos(2)));
        Entry e = c.getNthEntry(2, ManagedCursor.IndividualDeletedEntries.Exclude);
        assertThat(payloads(List.of(e))).containsExactly("3");
        Entry i = c.getNthEntry(2, ManagedCursor.IndividualDeletedEntries.Include);
        assertThat(payloads(List.of(i))).containsExactly("2");
        assertThat(c.getNthEntry(10, ManagedCursor.IndividualDeletedEntries.Include)).isNull();
    }

    @Test
    void getCursorStats_afterReadsAndAcks_reportsTruthfully() throws Exception {
        host.appendNumbered(5);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        payloads(c.readEntries(3));
        c.markDelete(pos(0), Map.of("k", 1L));
        c.delete(pos(2));
        ManagedLedgerInternalStats.CursorStats s = c.getCursorStats();
        assertThat(s.markDeletePosition).isEqualTo(pos(0).toString());
        assertThat(s.readPosition).isEqualTo(pos(3).toString());
        assertThat(s.individuallyDeletedMessages).isEqualTo("[(" + L + ":1.." + L + ":2]]");
        assertThat(s.totalNonContiguousDeletedMessagesRange).isEqualTo(1);
        assertThat(s.numberOfEntriesSinceFirstNotAckedMessage).isEqualTo(3);
        assertThat(s.properties).containsEntry("k", 1L);
        assertThat(s.state).isEqualTo("Open");
        assertThat(c.getStats().getPersistZookeeperSucceed()).isGreaterThanOrEqualTo(1);
        assertThat(c.getEstimatedSizeSinceMarkDeletePosition()).isEqualTo(4);
    }

    @Test
    void deleteState_existingCursor_removesItFromStore() {
        NereusManagedCursor c = open("gone", InitialPosition.Earliest);
        assertThat(await(cursorStore.listCursors(host.streamId()))).contains("gone");
        await(c.deleteState());
        assertThat(await(cursorStore.listCursors(host.streamId()))).doesNotContain("gone");
        assertThat(c.isClosed()).isTrue();
    }

    @Test
    void resetCursor_positionWithAckSet_keepsThatEntrysBatchSetAndCompletesWithReadPosition() {
        host.appendNumbered(5);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<Object> done = new CompletableFuture<>();
        c.asyncResetCursor(AckSetStateUtil.createPositionWithAckSet(L, 3, new long[] {0b1100L}), false,
                new AsyncCallbacks.ResetCursorCallback() {
                    @Override
                    public void resetComplete(Object ctx) {
                        done.complete(ctx);
                    }

                    @Override
                    public void resetFailed(ManagedLedgerException exception, Object ctx) {
                        done.completeExceptionally(exception);
                    }
                });
        assertThat(await(done)).isEqualTo(pos(3));
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(2));
        assertThat(c.getBatchPositionAckSet(pos(3))).containsExactly(0b1100L);
        assertThat(stored("sub").batchAckSets()).containsKey(3L);
    }

    @Test
    void copyAcksFrom_durableSource_nonDurableCopySkipsSameEntries() throws Exception {
        host.appendNumbered(6);
        NereusManagedCursor source = open("sub", InitialPosition.Earliest);
        source.markDelete(pos(1));
        source.delete(List.of(pos(3), pos(4)));
        NereusManagedCursor copy = NereusManagedCursor.nonDurable(host, "dup", source.getMarkDeletedPosition(),
                InitialPosition.Latest, false);
        copy.copyAcksFrom(source);
        assertThat(copy.getMarkDeletedPosition()).isEqualTo(pos(1));
        assertThat(payloads(copy.readEntries(10))).containsExactly("2", "5");
        assertThat(payloads(source.readEntries(10))).containsExactly("2", "5");
    }

    @Test
    void asyncReadEntriesWithSkip_skipPredicate_dropsMatchingWithoutCountingThem() {
        host.appendNumbered(5);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<List<Entry>> f = new CompletableFuture<>();
        c.asyncReadEntriesWithSkip(2, -1, new AsyncCallbacks.ReadEntriesCallback() {
            @Override
            public void readEntriesComplete(List<Entry> entries, Object ctx) {
                f.complete(entries);
            }

            @Override
            public void readEntriesFailed(ManagedLedgerException exception, Object ctx) {
                f.completeExceptionally(exception);
            }
        }, null, null, p -> p.getEntryId() % 2 == 1);
        assertThat(payloads(await(f))).containsExactly("0", "2"); // the skipped entry did not count
        assertThat(c.getReadPosition()).isEqualTo(pos(3));
    }

    @Test
    void delete_concurrentFromManyThreads_persistsNewest() throws Exception {
        host.appendNumbered(200);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            for (int i = 199; i >= 0; i--) {
                int offset = i;
                acks.add(CompletableFuture.runAsync(() -> {
                    try {
                        c.delete(pos(offset));
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }, pool));
            }
            await(CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)));
        } finally {
            pool.shutdown();
        }
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(199));
        assertThat(c.getTotalNonContiguousDeletedMessagesRange()).isZero();
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(200);
        assertThat(stored("sub").individuallyDeleted()).isEmpty();
    }

    @Test
    void readEntries_unreadableEntry_failsOrIsSkippedWhenAutoSkipOn() throws Exception {
        host.appendNumbered(6);
        host.makeUnreadable(2);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThat(payloads(c.readEntries(2))).containsExactly("0", "1");
        assertThatThrownBy(() -> c.readEntries(2))
                .isInstanceOf(ManagedLedgerException.NonRecoverableLedgerException.class);
        assertThat(c.getReadPosition()).isEqualTo(pos(2));

        host.config.setAutoSkipNonRecoverableData(true);
        assertThat(payloads(c.readEntries(2))).containsExactly("4", "5");
        assertThat(c.getReadPosition()).isEqualTo(pos(6));
    }

    @Test
    void readEntries_overDeletedRange_doesNotFetchAcknowledgedEntries() throws Exception {
        host.appendNumbered(10);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        c.delete(List.of(pos(2), pos(3), pos(4), pos(5), pos(6), pos(7)));
        long before = host.entriesServed.get();
        assertThat(payloads(c.readEntries(10))).containsExactly("0", "1", "8", "9");
        assertThat(host.entriesServed.get() - before).isEqualTo(4);
    }

    @Test
    void delete_onePositionBeyondEnd_appliesTheOthersAndFailsNamingIt() throws Exception {
        host.appendNumbered(10);
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        CompletableFuture<Void> f = new CompletableFuture<>();
        c.asyncDelete(List.of(pos(0), pos(1), pos(42), pos(5)), new AsyncCallbacks.DeleteCallback() {
            @Override
            public void deleteComplete(Object ctx) {
                f.complete(null);
            }

            @Override
            public void deleteFailed(ManagedLedgerException exception, Object ctx) {
                f.completeExceptionally(exception);
            }
        }, null);
        assertThat(f).failsWithin(Duration.ofSeconds(30)).withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(ManagedLedgerException.InvalidCursorPositionException.class)
                .withMessageContaining(pos(42).toString());
        assertThat(c.getMarkDeletedPosition()).isEqualTo(pos(1));
        assertThat(c.isMessageDeleted(pos(5))).isTrue();
        assertThat(c.getNumberOfEntriesInBacklog(true)).isEqualTo(7);
        await(c.closeAsync());
        assertThat(stored("sub").markDeleteEnd()).isEqualTo(2);
        assertThat(stored("sub").individuallyDeleted()).containsExactly(OffsetRange.of(5, 6));
    }

    @Test
    void activity_eachChangeIsToldOnce_alwaysInactiveStaysInactive_closeEndsIt() {
        NereusManagedCursor c = open("sub", InitialPosition.Earliest);
        assertThat(c.isActive()).as("a durable cursor starts inactive, as Pulsar's").isFalse();
        c.setActive();
        c.setActive();
        c.setInactive();
        c.setInactive();
        c.setActive();
        assertThat(c.isActive()).isTrue();
        await(c.closeAsync());
        assertThat(c.isActive()).isFalse();
        assertThat(host.activityChanges).containsExactly(true, false, true, false);

        NereusManagedCursor other = open("other", InitialPosition.Earliest);
        other.setAlwaysInactive();
        other.setActive();
        assertThat(other.isActive()).isFalse();
        assertThat(host.activityChanges).as("nothing more told").hasSize(4);
    }
}
