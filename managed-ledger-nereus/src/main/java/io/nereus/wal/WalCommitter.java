package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendOutcome;
import io.nereus.metadata.CommitResult;
import io.nereus.metadata.StreamAppend;
import io.nereus.metadata.StreamCommitStore;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalTarget;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metadata commit of a group of consecutive, acknowledged WAL batches: one
 * {@link io.nereus.metadata.StreamCommitStore#commit} transaction for all their live stream appends (a stream
 * has one append per batch it is in), retried without a stream the commit refuses. Completes every append of
 * the group.
 *
 * <p>{@link #commit} is called on the writer's owner thread, one group at a time, in sequence order; it checks
 * liveness and builds the transaction there. Appends are completed on the thread that finished the
 * transaction (the metadata executor), or on the owner for appends dropped before the commit.
 */
final class WalCommitter {
    /** Logs under the writer's name, which operators already configure. */
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);

    private final StreamCommitStore streams;
    private final LongAdder transactions = new LongAdder();
    private final LongAdder committedAppends = new LongAdder();

    private final WalObserver observer;

    WalCommitter(StreamCommitStore streams, WalObserver observer) {
        this.streams = streams;
        this.observer = observer;
    }

    /**
     * Commits {@code group} (acknowledged batches, in order) in one transaction, refusals aside. The future
     * completes once every append of the group is completed; it never fails.
     */
    CompletableFuture<Void> commit(List<SealedBatch> group) {
        try {
            return build(group).exceptionally(t -> failGroup(group, t));
        } catch (RuntimeException t) {
            return CompletableFuture.completedFuture(failGroup(group, t));
        }
    }

    /** Metadata commit transactions started, recommits included; any thread. */
    long transactions() {
        return transactions.sum();
    }

    /** Stream appends committed; any thread. */
    long committedAppends() {
        return committedAppends.sum();
    }

    private Void failGroup(List<SealedBatch> group, Throwable t) {
        LOG.error("coalesced WAL batch commit step failed: firstSequence={}", group.get(0).sequence, t);
        group.forEach(b -> b.failAll(ErrorCode.RETRIABLE_COMMIT_FAILED, t));
        return null;
    }

    private CompletableFuture<Void> build(List<SealedBatch> group) {
        List<PendingSection> live = new ArrayList<>();
        List<StreamAppend> appends = new ArrayList<>();
        Set<StreamId> dropped = new HashSet<>();
        for (SealedBatch batch : group) {
            for (int i = 0; i < batch.sections.size(); i++) {
                PendingSection s = batch.sections.get(i);
                // a stream's later appends cannot commit without its earlier ones: they would not chain
                if (dropped.contains(s.stream) || !s.live()) {
                    dropped.add(s.stream);
                    s.fail(new NereusException(ErrorCode.RETRIABLE_ABANDONED, Map.of("stream", s.stream)));
                    continue;
                }
                // the section's checksum was computed once, when the batch was sealed, and stored in the batch
                WalSection ws = batch.stored.get(i);
                live.add(s);
                appends.add(new StreamAppend(s.stream, s.epoch, ws.range(),
                        new WalTarget(batch.sliceId(), batch.entryId(), i), ws.checksum(), s.entries.size(),
                        ws.payloadBytes()));
            }
        }
        return commitLoop(live, appends);
    }

    private CompletableFuture<Void> commitLoop(List<PendingSection> sections, List<StreamAppend> appends) {
        if (appends.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        transactions.increment();
        // a measurement, not logic: the transaction's latency for the observer
        long started = System.nanoTime();
        return streams.commit(appends).handle((result, error) -> {
            observer.commitFinished(System.nanoTime() - started);
            if (error != null) {
                LOG.warn("WAL batch commit failed, outcome unknown: appends={}", appends.size(), error);
                for (PendingSection s : sections) {
                    s.fail(new NereusException(ErrorCode.RETRIABLE_COMMIT_FAILED, Map.of("stream", s.stream), error));
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (result instanceof CommitResult.Committed c) {
                committedAppends.add(sections.size());
                for (int i = 0; i < sections.size(); i++) {
                    sections.get(i).complete(c.heads().get(i));
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (result instanceof CommitResult.SliceNotOpen n) {
                return withoutSlice(sections, appends, n);
            }
            StreamId refused;
            AppendOutcome outcome;
            if (result instanceof CommitResult.Rejected r) {
                refused = r.append().stream();
                outcome = r.outcome();
            } else {
                refused = ((CommitResult.UnknownStream) result).stream();
                outcome = null;
            }
            List<PendingSection> rest = new ArrayList<>();
            List<StreamAppend> restAppends = new ArrayList<>();
            for (int i = 0; i < sections.size(); i++) {
                if (sections.get(i).stream.equals(refused)) {
                    sections.get(i).fail(refusal(refused, outcome));
                } else {
                    rest.add(sections.get(i));
                    restAppends.add(appends.get(i));
                }
            }
            return commitLoop(rest, restAppends);
        }).thenCompose(f -> f);
    }

    /**
     * Recommits without the appends into slice {@code n.sliceId()}, which is no longer OPEN (slice recovery sealed it
     * after judging this writer gone), and without the later appends of their streams, which cannot chain without
     * them; those fail RETRIABLE_COMMIT_FAILED naming the slice and its state.
     */
    private CompletableFuture<Void> withoutSlice(List<PendingSection> sections, List<StreamAppend> appends,
            CommitResult.SliceNotOpen n) {
        LOG.warn("WAL batch commit refused, its slice is not open: slice={} state={}", n.sliceId(),
                n.state().map(Enum::name).orElse("unregistered"));
        Set<StreamId> dropped = new HashSet<>();
        List<PendingSection> rest = new ArrayList<>();
        List<StreamAppend> restAppends = new ArrayList<>();
        for (int i = 0; i < sections.size(); i++) {
            StreamAppend a = appends.get(i);
            if (a.target().sliceId() == n.sliceId() || dropped.contains(a.stream())) {
                dropped.add(a.stream());
                sections.get(i).fail(new NereusException(ErrorCode.RETRIABLE_COMMIT_FAILED, ErrorContext.of(
                        "stream", a.stream(), "slice", n.sliceId(), "sliceState",
                        n.state().map(Enum::name).orElse("unregistered"))));
            } else {
                rest.add(sections.get(i));
                restAppends.add(a);
            }
        }
        return commitLoop(rest, restAppends);
    }

    /**
     * The failure of an append the commit refused, by the refusal ({@code outcome}, in the context; null when the
     * stream has no head): fenced, not accepting commits, gone, or the head is elsewhere (retriable).
     */
    static NereusException refusal(StreamId stream, AppendOutcome outcome) {
        if (outcome == null) {
            return new NereusException(ErrorCode.NOT_FOUND, Map.of("stream", stream));
        }
        if (outcome instanceof AppendOutcome.Fenced f) {
            return new NereusException(ErrorCode.FENCED, ErrorContext.of("stream", stream, "headEpoch", f.headEpoch(),
                    "requestEpoch", f.appendEpoch(), "outcome", f));
        }
        ErrorCode code = outcome instanceof AppendOutcome.NotAccepting ? ErrorCode.NOT_WRITABLE
                : ErrorCode.RETRIABLE_COMMIT_FAILED;
        return new NereusException(code, ErrorContext.of("stream", stream, "outcome", outcome));
    }
}
