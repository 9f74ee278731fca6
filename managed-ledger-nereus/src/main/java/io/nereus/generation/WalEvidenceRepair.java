package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.GenerationIndexStore;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.RepairOutcome;
import io.nereus.metadata.RepairRequest;
import io.nereus.metadata.StreamCommitStore;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalIntent;
import io.nereus.metadata.WalTarget;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalBatchCodec;
import io.nereus.wal.WalReader;
import io.nereus.wal.WalSection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Generation-0 repair from WAL evidence (DESIGN §5): rebuilds a missing generation-0 record of a committed
 * offset from the head, the stream's intents and the WAL batches of the slice that holds the offset.
 *
 * <ol>
 *   <li>The head decides first: an offset below the trim point is {@link Outcome.ProvedTrimmed}.</li>
 *   <li>Candidate slices are those whose intent's first offset is not above the offset, greatest first
 *       offset first (a stream's later slice holds its later offsets).</li>
 *   <li>A slice is scanned from its first batch to its end (the first entry BookKeeper reports missing); the
 *       <em>last</em> section of the stream holding the offset whose CRC32C matches its payload is the
 *       evidence. A writer only rewrites offsets whose commit failed, and never after they committed, so a
 *       later section of the same offsets supersedes an earlier one; an earlier match may be a failed write.</li>
 *   <li>The evidence becomes a record through
 *       {@link io.nereus.metadata.GenerationIndexStore#repairGenerationZero}, which checks the head
 *       and the index again in its transaction. A slice without usable evidence sends the scan to the next
 *       candidate.</li>
 * </ol>
 * Bounded by {@code maxBatches} batch reads (end probes included) and a time budget over all slices; running out is
 * {@link Outcome.Incomplete} (retriable), as is a transient read failure. When every candidate slice was read to
 * its end without evidence, or a candidate slice is missing altogether (or being collected: its ledger is about to
 * go), the result is {@link Outcome.NoEvidence}, logged as an error: committed data is gone. A missing slice stops
 * the search rather than passing to older slices, which may hold an earlier failed write of the same offsets; a
 * false data-loss report is loud, a wrong binding would be silent. Holds no state between calls, so nothing is ever
 * cached negatively. Thread-safe.
 */
public final class WalEvidenceRepair implements GenerationZeroRepair {
    private static final Logger LOG = LoggerFactory.getLogger(WalEvidenceRepair.class);

    private final StreamCommitStore streams;
    private final GenerationIndexStore index;
    private final WalReader wal;
    private final int maxBatches;
    private final Duration timeBudget;
    private final Clock clock;

    public WalEvidenceRepair(StreamCommitStore streams, GenerationIndexStore index, WalReader wal, int maxBatches,
            Duration timeBudget, Clock clock) {
        this.streams = Objects.requireNonNull(streams, "streams");
        this.index = Objects.requireNonNull(index, "index");
        this.wal = Objects.requireNonNull(wal, "wal");
        this.timeBudget = Objects.requireNonNull(timeBudget, "timeBudget");
        this.clock = Objects.requireNonNull(clock, "clock");
        if (maxBatches < 0) {
            throw new IllegalArgumentException("repair batch budget must be >= 0: " + maxBatches);
        }
        this.maxBatches = maxBatches;
    }

    /** One repair call: what it looks for and what it has spent. Confined to the call's future chain. */
    private final class Attempt {
        final StreamId stream;
        final long offset;
        final Instant deadline;
        final List<Long> tried = new ArrayList<>();
        int batchesRead;

        Attempt(StreamId stream, long offset) {
            this.stream = stream;
            this.offset = offset;
            this.deadline = clock.instant().plus(timeBudget);
        }

        /** Why the budget is spent, or empty while a batch may still be read. */
        Optional<String> exhausted() {
            if (batchesRead >= maxBatches) {
                return Optional.of("batch budget of " + maxBatches + " spent");
            }
            if (!clock.instant().isBefore(deadline)) {
                return Optional.of("time budget of " + timeBudget + " spent");
            }
            return Optional.empty();
        }
    }

    /** The section found so far in a slice. */
    private record Evidence(WalTarget target, WalSection section) {
    }

    @Override
    public CompletableFuture<Outcome> repair(StreamId stream, long offset) {
        try {
            Attempt a = new Attempt(Objects.requireNonNull(stream, "stream"), offset);
            return streams.head(stream).thenCompose(h -> {
                var head = h.orElseThrow(() -> new NereusException(ErrorCode.NOT_FOUND, Map.of("stream", stream)));
                if (offset < head.trimOffset()) {
                    return CompletableFuture.completedFuture(new Outcome.ProvedTrimmed(head.trimOffset()));
                }
                if (offset >= head.committedEnd()) {
                    return CompletableFuture.completedFuture(
                            new Outcome.Incomplete("offset is not committed (committed end " + head.committedEnd() + ")"));
                }
                return streams.intents(stream).thenCompose(intents -> trySlices(a, candidates(intents, offset), 0));
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Slices whose intent's first offset is not above {@code offset}, greatest first offset first. */
    static List<Long> candidates(Map<Long, WalIntent> intents, long offset) {
        return intents.entrySet().stream()
                .filter(e -> e.getValue().firstOffset() <= offset)
                .sorted(Comparator.comparing((Map.Entry<Long, WalIntent> e) -> e.getValue().firstOffset())
                        .thenComparing(Map.Entry::getKey).reversed())
                .map(Map.Entry::getKey)
                .toList();
    }

    private CompletableFuture<Outcome> trySlices(Attempt a, List<Long> slices, int i) {
        if (i >= slices.size()) {
            LOG.error("committed offset has no WAL evidence in any slice, committed data is lost: stream={} offset={}"
                    + " slicesTried={} batchesRead={}", a.stream, a.offset, a.tried, a.batchesRead);
            return CompletableFuture.completedFuture(new Outcome.NoEvidence());
        }
        long slice = slices.get(i);
        a.tried.add(slice);
        return scan(a, slice, 0, Optional.empty()).thenCompose(step -> {
            if (step instanceof ScanStep.Done d) {
                return CompletableFuture.completedFuture(d.outcome());
            }
            Optional<Evidence> found = ((ScanStep.SliceEnd) step).evidence();
            if (found.isEmpty()) {
                return trySlices(a, slices, i + 1);
            }
            return write(a, found.get()).thenCompose(o -> o.isPresent()
                    ? CompletableFuture.completedFuture(o.get()) : trySlices(a, slices, i + 1));
        });
    }

    private sealed interface ScanStep {
        /** The slice was read to its end; the last matching section, if any. */
        record SliceEnd(Optional<Evidence> evidence) implements ScanStep {
        }

        /** The repair ends here with this outcome. */
        record Done(Outcome outcome) implements ScanStep {
        }
    }

    private CompletableFuture<ScanStep> scan(Attempt a, long slice, long entry, Optional<Evidence> found) {
        Optional<String> spent = a.exhausted();
        if (spent.isPresent()) {
            return CompletableFuture.completedFuture(new ScanStep.Done(new Outcome.Incomplete(spent.get())));
        }
        a.batchesRead++;
        return wal.readUncached(slice, entry).handle((fetched, error) -> {
            if (error == null) {
                Optional<Evidence> here;
                try {
                    here = match(a, slice, entry, fetched.batch());
                } finally {
                    fetched.release(); // evidence keeps the section's range, checksum and sizes, not its bytes
                }
                return scan(a, slice, entry + 1, here.or(() -> found));
            }
            Throwable t = Failures.unwrap(error);
            ErrorCode code = t instanceof NereusException n ? n.code() : null;
            if (code == ErrorCode.TARGET_MISSING) {
                if (entry == 0) {
                    LOG.error("WAL slice named by an intent is missing, committed data may be lost: stream={}"
                            + " offset={} slice={} slicesTried={}", a.stream, a.offset, slice, a.tried);
                    return CompletableFuture.<ScanStep>completedFuture(new ScanStep.Done(new Outcome.NoEvidence()));
                }
                return CompletableFuture.<ScanStep>completedFuture(new ScanStep.SliceEnd(found));
            }
            if (code == ErrorCode.CORRUPT_DATA) {
                LOG.warn("skipping an unreadable WAL batch during repair: stream={} slice={} entry={} reason={}",
                        a.stream, slice, entry, t.getMessage());
                return scan(a, slice, entry + 1, found);
            }
            return CompletableFuture.<ScanStep>completedFuture(new ScanStep.Done(new Outcome.Incomplete(
                    "reading WAL slice " + slice + " entry " + entry + " failed: " + t)));
        }).thenCompose(f -> f);
    }

    /** The stream's section of {@code batch} holding the offset, if its payload matches its CRC32C. */
    private static Optional<Evidence> match(Attempt a, long slice, long entry, WalBatch batch) {
        if (batch.sliceId() != slice) {
            LOG.warn("WAL batch names another slice, ignored: stream={} slice={} entry={} batchSlice={}",
                    a.stream, slice, entry, batch.sliceId());
            return Optional.empty();
        }
        List<WalSection> sections = batch.sections();
        for (int pos = 0; pos < sections.size(); pos++) {
            WalSection s = sections.get(pos);
            if (!s.stream().equals(a.stream) || !s.range().contains(a.offset)) {
                continue;
            }
            if (!WalBatchCodec.verifySection(s, s.checksum())) {
                LOG.warn("WAL section fails its checksum, ignored: stream={} slice={} entry={} range={}",
                        a.stream, slice, entry, s.range());
                return Optional.empty();
            }
            return Optional.of(new Evidence(new WalTarget(slice, entry, pos), s));
        }
        return Optional.empty();
    }

    /** Writes the record; empty when this evidence must be passed over for the next slice. */
    private CompletableFuture<Optional<Outcome>> write(Attempt a, Evidence e) {
        WalSection s = e.section();
        RepairRequest request = new RepairRequest(a.stream, s.range(), e.target(), s.checksum(), s.entries().size(),
                s.payloadBytes());
        return index.repairGenerationZero(request).thenApply(o -> {
            if (o instanceof RepairOutcome.Repaired r) {
                LOG.info("generation-0 record repaired: stream={} offset={} range={} target={}", a.stream, a.offset,
                        r.record().range(), r.record().target());
                return Optional.of(new Outcome.Repaired());
            }
            if (o instanceof RepairOutcome.AlreadyCovered) {
                return Optional.of(new Outcome.Repaired());
            }
            if (o instanceof RepairOutcome.Trimmed t) {
                return Optional.of(new Outcome.ProvedTrimmed(t.firstAvailable()));
            }
            if (o instanceof RepairOutcome.NotCommitted n) {
                LOG.warn("WAL section reaches beyond the committed end, not evidence: stream={} offset={} range={}"
                        + " committedEnd={} target={}", a.stream, a.offset, s.range(), n.committedEnd(), e.target());
                return Optional.empty();
            }
            if (o instanceof RepairOutcome.SliceCollected c) {
                LOG.error("WAL slice holding the evidence is being collected or gone, committed data may be lost:"
                        + " stream={} offset={} slice={}", a.stream, a.offset, c.sliceId());
                return Optional.of(new Outcome.NoEvidence());
            }
            IndexRecord occupant = ((RepairOutcome.KeyOccupied) o).occupant();
            LOG.error("generation-0 record is quarantined, repair will not revive it: stream={} offset={} range={}"
                    + " state={}", a.stream, a.offset, occupant.range(), occupant.state());
            return Optional.of(new Outcome.NoEvidence());
        });
    }
}
