package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.Failures;
import io.nereus.metadata.SliceRegistration;
import io.nereus.metadata.WalSliceStore;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.common.concurrent.FutureUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The start-time check that the metadata's WAL slices are this BookKeeper's ledgers, on a real in-process bookie:
 * slices registered as a WAL writer registers them, over ledgers made with or without the WAL's custom metadata,
 * some deleted as a wiped BookKeeper would have lost them.
 */
class WalLedgerCheckTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final byte[] PASSWORD = new byte[0];

    private EngineFixture engine;
    private WalSliceStore slices;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "ledger-check");
        slices = engine.metadata.slices();
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    @Test
    void noSlices_passes() {
        assertThat(await(verify())).isNull();
    }

    @Test
    void slicesWhoseLedgersAreTheWalsOwn_pass_openAndSealed() throws Exception {
        long incarnation = await(slices.takeLease("broker-a", Duration.ofSeconds(30)));
        long open = register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        long sealed = register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        await(slices.seal(sealed));
        assertThat(open).isNotEqualTo(sealed);
        assertThat(await(verify())).isNull();
    }

    @Test
    void everySliceLedgerMissing_asAfterBookKeeperWasWiped_isRefusedNamingTheSlicesAndWhatToDo() throws Exception {
        long incarnation = await(slices.takeLease("broker-a", Duration.ofSeconds(30)));
        long a = register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        long b = register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        await(slices.seal(a));
        TestLedgers.delete(engine.bk, a);
        TestLedgers.delete(engine.bk, b);

        assertThatThrownBy(() -> await(verify())).satisfies(t -> assertThat(Failures.unwrap(t))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("names WAL slices [" + a + ", " + b + "]")
                .hasMessageContaining("BookKeeper has none of these ledgers")
                .hasMessageContaining("the test's metadata")
                .hasMessageContaining("move the metadata away to start empty"));
    }

    @Test
    void sliceWhoseLedgerIdWasReusedBySomethingElse_isRefusedNamingBothWriters() throws Exception {
        long incarnation = await(slices.takeLease("broker-a", Duration.ofSeconds(30)));
        register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        WriteHandle other = TestLedgers.create(engine.bk, PASSWORD); // a ledger of someone else, not of a WAL
        long reused = register(other, "broker-b", incarnation);

        assertThatThrownBy(() -> await(verify())).satisfies(t -> assertThat(Failures.unwrap(t))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("names WAL slice " + reused + " as written by broker-b")
                .hasMessageContaining("written by something other than a Nereus WAL")
                .hasMessageContaining("reuses its ledger ids"));
    }

    @Test
    void sliceWhoseLedgerAnotherWalWriterWrote_isRefused() throws Exception {
        long incarnation = await(slices.takeLease("broker-a", Duration.ofSeconds(30)));
        long id = register(walLedger("broker-x", 7), "broker-a", incarnation);

        assertThatThrownBy(() -> await(verify())).satisfies(t -> assertThat(Failures.unwrap(t))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("names WAL slice " + id + " as written by broker-a (incarnation " + incarnation
                        + ")")
                .hasMessageContaining("was written by broker-x (incarnation 7)"));
    }

    @Test
    void someSliceLedgersMissing_othersPresent_startsAnyway_theLossIsLogged() throws Exception {
        long incarnation = await(slices.takeLease("broker-a", Duration.ofSeconds(30)));
        long kept = register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        long lost = register(walLedger("broker-a", incarnation), "broker-a", incarnation);
        await(slices.seal(kept));
        await(slices.seal(lost));
        TestLedgers.delete(engine.bk, lost);
        assertThat(await(verify())).isNull();
    }

    private CompletableFuture<Void> verify() {
        return WalLedgerCheck.verify(engine.bk, slices, "the test's metadata");
    }

    /** A ledger made as the WAL makes its slices: with its writer id and incarnation in its custom metadata. */
    private WriteHandle walLedger(String writerId, long incarnation) throws Exception {
        Map<String, byte[]> custom = Map.of(
                WalWriter.LEDGER_METADATA_WRITER, writerId.getBytes(StandardCharsets.UTF_8),
                WalWriter.LEDGER_METADATA_INCARNATION, Long.toString(incarnation).getBytes(StandardCharsets.UTF_8));
        return FutureUtils.result(engine.bk.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1)
                .withAckQuorumSize(1).withDigestType(DigestType.CRC32C).withPassword(PASSWORD)
                .withCustomMetadata(custom).execute(), 30, TimeUnit.SECONDS);
    }

    private long register(WriteHandle ledger, String writerId, long incarnation) throws Exception {
        assertThat(await(slices.register(ledger.getId(), writerId, incarnation)))
                .isInstanceOf(SliceRegistration.Registered.class);
        ledger.close();
        return ledger.getId();
    }
}
