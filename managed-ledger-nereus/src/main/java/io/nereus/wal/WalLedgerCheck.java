package io.nereus.wal;

import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalSliceStore;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks at start that the metadata and BookKeeper belong together: that the WAL slices the metadata names are
 * ledgers of this BookKeeper, written by the writers the metadata says. Every WAL ledger carries its writer id and
 * lease incarnation in its custom metadata ({@link WalWriter#LEDGER_METADATA_WRITER},
 * {@link WalWriter#LEDGER_METADATA_INCARNATION}), as the slice's record does, so a sample of the OPEN and SEALED
 * slices (their ledgers exist until the slice is collected) tells:
 * <ul>
 *   <li>every sampled ledger is missing: the metadata belongs to another cluster, or BookKeeper (its bookies and its
 *       ledger metadata) was wiped while the metadata was kept. Refused: every read of the data would fail;</li>
 *   <li>a sampled ledger exists but was written by someone else: BookKeeper was wiped and reuses the ids, or the
 *       metadata belongs to another cluster. Refused: reads could return another ledger's bytes;</li>
 *   <li>some ledgers missing, others matching: this BookKeeper lost ledgers (a data loss of its own). Logged as an
 *       error naming them; the storage starts, and reads of what they held fail naming stream and offset.</li>
 * </ul>
 * A ledger whose metadata cannot be read (BookKeeper's metadata service down, or a client that does not serve ledger
 * metadata) decides nothing. Stateless.
 */
public final class WalLedgerCheck {
    private static final Logger LOG = LoggerFactory.getLogger(WalLedgerCheck.class);
    /** Slices sampled of each state, the lowest ids first. */
    static final int SAMPLED_PER_STATE = 8;

    private WalLedgerCheck() {
    }

    /** What one sampled slice's ledger showed. */
    private sealed interface Finding {
        long sliceId();
    }

    private record Matches(long sliceId) implements Finding {
    }

    private record Missing(long sliceId) implements Finding {
    }

    private record Foreign(long sliceId, WalSlice expected, String writer, String incarnation) implements Finding {
    }

    private record Unknown(long sliceId) implements Finding {
    }

    /**
     * Checks the WAL slices of {@code slices} against {@code bk}.
     *
     * @param metadataLocation where the metadata lives (a directory or cluster file and root), named in the refusal
     * @return a future completing once the check passed; failing with {@link IllegalStateException} whose message says
     *         what was found and what to do when the metadata and BookKeeper do not belong together
     */
    public static CompletableFuture<Void> verify(BookKeeper bk, WalSliceStore slices, String metadataLocation) {
        Objects.requireNonNull(bk, "bk");
        Objects.requireNonNull(slices, "slices");
        try {
            return slices.slices(WalSliceState.OPEN, 0, SAMPLED_PER_STATE)
                    .thenCombine(slices.slices(WalSliceState.SEALED, 0, SAMPLED_PER_STATE), (open, sealed) -> {
                        SortedMap<Long, WalSlice> sample = new TreeMap<>(open);
                        sample.putAll(sealed);
                        return sample;
                    }).thenCompose(sample -> {
                        List<CompletableFuture<Finding>> findings = new ArrayList<>();
                        sample.forEach((id, slice) -> findings.add(inspect(bk, id, slice)));
                        return CompletableFuture.allOf(findings.toArray(new CompletableFuture<?>[0]))
                                .thenAccept(ignored -> decide(findings.stream().map(CompletableFuture::join).toList(),
                                        metadataLocation));
                    });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static CompletableFuture<Finding> inspect(BookKeeper bk, long id, WalSlice slice) {
        CompletableFuture<LedgerMetadata> read;
        try {
            read = bk.getLedgerMetadata(id);
        } catch (RuntimeException e) {
            read = CompletableFuture.failedFuture(e);
        }
        return read.handle((metadata, error) -> {
            if (error != null) {
                return WalLedgers.noSuchLedger(WalLedgers.code(error)) ? new Missing(id) : new Unknown(id);
            }
            Map<String, byte[]> custom = metadata.getCustomMetadata();
            String writer = text(custom.get(WalWriter.LEDGER_METADATA_WRITER));
            String incarnation = text(custom.get(WalWriter.LEDGER_METADATA_INCARNATION));
            boolean same = slice.writerId().equals(writer) && Long.toString(slice.incarnation()).equals(incarnation);
            return same ? new Matches(id) : new Foreign(id, slice, writer, incarnation);
        });
    }

    private static void decide(List<Finding> findings, String metadataLocation) {
        List<Long> missing = findings.stream().filter(f -> f instanceof Missing).map(Finding::sliceId).toList();
        long matching = findings.stream().filter(f -> f instanceof Matches).count();
        for (Finding f : findings) {
            if (f instanceof Foreign foreign) {
                throw new IllegalStateException("Nereus metadata in " + metadataLocation + " names WAL slice "
                        + foreign.sliceId() + " as written by " + foreign.expected().writerId() + " (incarnation "
                        + foreign.expected().incarnation() + "), but BookKeeper's ledger " + foreign.sliceId()
                        + " was written by " + (foreign.writer() == null ? "something other than a Nereus WAL"
                        : foreign.writer() + " (incarnation " + foreign.incarnation() + ")")
                        + ": this metadata belongs to another BookKeeper cluster, or BookKeeper was wiped and reuses "
                        + "its ledger ids. Refusing to start, so that no read returns another ledger's bytes. Point "
                        + "Nereus at this cluster's metadata, or move the metadata away to start empty (the data it "
                        + "indexes is not in this BookKeeper)");
            }
        }
        if (!missing.isEmpty() && matching == 0
                && findings.stream().noneMatch(f -> f instanceof Unknown)) {
            throw new IllegalStateException("Nereus metadata in " + metadataLocation + " names WAL slices " + missing
                    + ", and BookKeeper has none of these ledgers: its bookies and ledger metadata were wiped while "
                    + "the Nereus metadata was kept, or this metadata belongs to another cluster. Refusing to start, "
                    + "since every read of the data it indexes would fail. Point Nereus at this cluster's metadata, "
                    + "or move the metadata away to start empty");
        }
        if (!missing.isEmpty()) {
            LOG.error("BookKeeper has lost WAL ledgers the Nereus metadata names; reads of what they held fail: "
                    + "slices={} metadata={}", missing, metadataLocation);
        }
    }

    private static String text(byte[] value) {
        return value == null ? null : new String(value, StandardCharsets.UTF_8);
    }
}
