package io.nereus.wal;

import io.nereus.error.Failures;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.LedgerMetadataBuilder;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.meta.LedgerManager;

/**
 * The WAL's ledger operations on BookKeeper, through BookKeeper's current client API
 * ({@code org.apache.bookkeeper.client.api}: {@link WriteHandle}, {@link ReadHandle}, the open and delete builders),
 * which Pulsar's test BookKeeper ({@code PulsarMockBookKeeper}) implements as well as the real client, so the WAL
 * runs on either. Slices are CRC32C-digested ledgers protected by the WAL's password.
 *
 * <p><b>Creation</b> is the one exception: the mock does not implement the create builder
 * ({@code newCreateLedgerOp}; BookKeeper's own builder picks an ensemble through a bookie watcher the mock does not
 * have and fails with a NullPointerException), so a slice is created with {@code asyncCreateLedger}, as Pulsar
 * creates its own ledgers, and the handle it returns is used only as a {@link WriteHandle}. {@link #closeAt}, the
 * last resort of slice recovery, writes the ledger's metadata through the client's ledger manager, which the
 * current API does not offer.
 *
 * <p>Every method returns a future and never throws; failures are BookKeeper's exceptions ({@link #code} reads
 * their result code). Stateless.
 */
public final class WalLedgers {
    private WalLedgers() {
    }

    /**
     * Creates a slice's ledger with the WAL's quorums and password and the given custom metadata.
     *
     * @return the ledger to write; fails with the BookKeeper exception of the creation's result code
     */
    static CompletableFuture<WriteHandle> create(org.apache.bookkeeper.client.BookKeeper bk, WalConfig config,
            Map<String, byte[]> customMetadata) {
        CompletableFuture<WriteHandle> created = new CompletableFuture<>();
        try {
            bk.asyncCreateLedger(config.ensembleSize(), config.writeQuorum(), config.ackQuorum(),
                    org.apache.bookkeeper.client.BookKeeper.DigestType.CRC32C, config.password(), (rc, lh, ctx) -> {
                        if (rc == BKException.Code.OK) {
                            created.complete(lh);
                        } else {
                            created.completeExceptionally(BKException.create(rc));
                        }
                    }, null, customMetadata);
        } catch (RuntimeException e) {
            created.completeExceptionally(e);
        }
        return created;
    }

    /**
     * Opens ledger {@code ledgerId} to read it, without recovery: a slice may still be written by its writer, whom
     * this open neither fences nor disturbs.
     */
    public static CompletableFuture<ReadHandle> openToRead(BookKeeper bk, long ledgerId, byte[] password) {
        return open(bk, ledgerId, password, false);
    }

    /**
     * Opens ledger {@code ledgerId} with recovery: BookKeeper fences it (its writer can add nothing more) and closes
     * it at the last entry the bookies hold. The caller closes the returned handle.
     */
    static CompletableFuture<ReadHandle> recover(BookKeeper bk, long ledgerId, byte[] password) {
        return open(bk, ledgerId, password, true);
    }

    private static CompletableFuture<ReadHandle> open(BookKeeper bk, long ledgerId, byte[] password,
            boolean recovery) {
        try {
            return bk.newOpenLedgerOp().withLedgerId(ledgerId).withRecovery(recovery)
                    .withDigestType(DigestType.CRC32C).withPassword(password).execute();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Closes ledger {@code ledgerId} in BookKeeper's ledger metadata at entry {@code lastEntryId} (-1: empty) without
     * BookKeeper's recovery, for a ledger whose recovery cannot finish because the bookies' last entry is unreadable
     * (a write torn by a crash of every bookie that held it: its digest does not match, so neither recovery nor an
     * open without recovery can learn the last entry). A closed ledger opens without asking the bookies for their
     * last entry, and its entries up to {@code lastEntryId} read one by one, each checked against its own digest.
     * The closed ledger's length is recorded as 0 (unknown without reading every entry). The caller makes sure no
     * acknowledged entry lies past {@code lastEntryId}; entries past it stay on the bookies unread until the ledger
     * is deleted.
     *
     * @return the last entry id of the closed ledger: {@code lastEntryId}, or where it was closed already (a racing
     *         recovery or close). Fails with the BookKeeper exception when its metadata cannot be read or written,
     *         and with {@link IllegalStateException} when {@code bk} is not a client that can write ledger metadata
     */
    static CompletableFuture<Long> closeAt(BookKeeper bk, long ledgerId, long lastEntryId) {
        if (!(bk instanceof org.apache.bookkeeper.client.BookKeeper client) || client.getLedgerManager() == null) {
            return CompletableFuture.failedFuture(new IllegalStateException(
                    "closing a ledger without recovery needs BookKeeper's own client, not " + bk.getClass().getName()));
        }
        LedgerManager ledgers = client.getLedgerManager();
        try {
            return ledgers.readLedgerMetadata(ledgerId).thenCompose(current -> {
                LedgerMetadata metadata = current.getValue();
                if (metadata.isClosed()) {
                    return CompletableFuture.completedFuture(metadata.getLastEntryId());
                }
                LedgerMetadata closed = LedgerMetadataBuilder.from(metadata).withClosedState()
                        .withLastEntryId(lastEntryId).withLength(0).build();
                return ledgers.writeLedgerMetadata(ledgerId, closed, current.getVersion())
                        .thenApply(written -> written.getValue().getLastEntryId());
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Deletes ledger {@code ledgerId}; fails with the BookKeeper exception, NoSuchLedgerExists among others. */
    public static CompletableFuture<Void> delete(BookKeeper bk, long ledgerId) {
        try {
            return bk.newDeleteLedgerOp().withLedgerId(ledgerId).execute();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The BookKeeper result code of {@code failure} (looking through future wrappers), or
     * {@link BKException.Code#UnexpectedConditionException} when it is not a BookKeeper exception.
     */
    public static int code(Throwable failure) {
        return Failures.unwrap(failure) instanceof org.apache.bookkeeper.client.api.BKException bk ? bk.getCode()
                : BKException.Code.UnexpectedConditionException;
    }

    /** Whether {@code code} says the ledger does not exist (in BookKeeper's metadata or on the bookies). */
    public static boolean noSuchLedger(int code) {
        return code == BKException.Code.NoSuchLedgerExistsException
                || code == BKException.Code.NoSuchLedgerExistsOnMetadataServerException;
    }
}
