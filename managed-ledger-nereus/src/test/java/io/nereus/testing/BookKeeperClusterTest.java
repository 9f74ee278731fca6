package io.nereus.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class BookKeeperClusterTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    @Test
    void ledger_writeThenRead_returnsTheBytes() throws Exception {
        BookKeeper bk = BK.newClient();
        byte[] pw = "pw".getBytes(StandardCharsets.UTF_8);
        try (WriteHandle w = bk.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                .withDigestType(DigestType.CRC32C).withPassword(pw).execute().get(30, TimeUnit.SECONDS)) {
            long e0 = w.appendAsync("hello".getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
            long e1 = w.appendAsync("world".getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
            assertThat(e0).isZero();
            assertThat(e1).isEqualTo(1);
            try (ReadHandle r = bk.newOpenLedgerOp().withLedgerId(w.getId()).withRecovery(false)
                    .withDigestType(DigestType.CRC32C).withPassword(pw).execute().get(30, TimeUnit.SECONDS);
                 LedgerEntries es = r.readUnconfirmedAsync(0, 1).get(30, TimeUnit.SECONDS)) {
                assertThat(new String(es.getEntry(1).getEntryBytes(), StandardCharsets.UTF_8)).isEqualTo("world");
            }
        }
    }
}
