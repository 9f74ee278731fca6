package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalSectionRef;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Reads of a run, the generation-0 record of a stream's consecutive appends into one slice, from the WAL on a real
 * bookie: any offset of the run is read from the one section holding it, also by a cold reader with no cache.
 */
@Timeout(120)
class GenerationZeroRunReadTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WalConfig.defaults()
            .withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1)));

    private EngineFixture engine;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "runs");
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private static List<String> texts(List<StreamEntry> entries) {
        List<String> out = entries.stream().map(e -> new String(e.bytes(), StandardCharsets.UTF_8)).toList();
        StreamEntry.releaseAll(entries);
        return out;
    }

    @Test
    void everyOffsetOfARun_readsFromItsSection_byAColdReader() {
        StreamStorage writer = engine.storage("broker-a", CONFIG);
        NereusStream s = await(writer.openStream("runs-0"));
        await(s.acquireWriter());
        NereusStream other = await(writer.openStream("runs-1"));
        await(other.acquireWriter());
        List<String> expected = new ArrayList<>();
        for (int round = 0; round < 40; round++) {
            List<AppendEntry> entries = new ArrayList<>();
            for (int e = 0; e <= round % 3; e++) {
                String p = "r" + round + "-e" + e + "-" + "x".repeat(round % 50);
                entries.add(AppendEntry.of(p.getBytes(StandardCharsets.UTF_8)));
                expected.add(p);
            }
            // the other stream's section sits in the same batches, before or after this one's
            List<CompletableFuture<?>> acks = new ArrayList<>();
            if (round % 2 == 0) {
                acks.add(other.append(List.of(AppendEntry.of(("o" + round).getBytes(StandardCharsets.UTF_8)))));
            }
            acks.add(s.append(entries));
            acks.forEach(f -> await(f));
        }
        List<IndexRecord> records = await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED));
        assertThat(records).as("40 appends, runs of at most 32 sections").hasSize(2);
        List<WalSectionRef> sections = records.stream().flatMap(r -> r.walSections().stream()).toList();
        assertThat(sections).hasSize(40);
        assertThat(sections.stream().mapToLong(w -> w.range().length()).sum()).isEqualTo(expected.size());

        StreamStorage cold = engine.storage("reader", CONFIG);
        NereusStream c = await(cold.openStream("runs-0"));
        for (int from : new int[] {expected.size() - 1, 0, 41, 17, 5}) {
            assertThat(texts(readAll(c, from, 3))).as("from %s", from)
                    .containsExactlyElementsOf(expected.subList(from, expected.size()));
        }
        assertThat(cold.walBytesRead()).isPositive();
    }
}
