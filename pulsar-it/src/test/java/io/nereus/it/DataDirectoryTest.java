package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/**
 * Nereus's own data directories as an operator meets them: created readable by their owner only, and a metadata
 * directory kept beside a wiped BookKeeper (or copied from another cluster) refused at start with what to do, not
 * served as "read failed" later.
 */
class DataDirectoryTest {
    private static final String TOPIC = "persistent://public/default/data-directory";

    @Test
    void embeddedMetadataAndObjectDirectories_areCreatedOwnerOnly() throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "the directories are the plugin's");
        try (StandaloneBroker broker = StandaloneBroker.start("DataDirectoryTest-permissions")) {
            produce(broker, 3);
            assertThat(permissions(broker.nereusMetadataDir())).isEqualTo("rwx------");
            assertThat(permissions(broker.objectStoreDir())).isEqualTo("rwx------");
        }
    }

    @Test
    void metadataKeptBesideAWipedBookKeeper_isRefusedAtStart_namingWhatWasFoundAndWhatToDo() throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "the metadata directory is the plugin's");
        Path kept;
        try (StandaloneBroker first = StandaloneBroker.start("DataDirectoryTest-first")) {
            produce(first, 10);
            kept = first.nereusMetadataDir();
        }

        // a fresh standalone (bookie and BookKeeper's metadata wiped) given the first one's Nereus metadata
        Throwable t = catchThrowable(() -> StandaloneBroker.start("DataDirectoryTest-wiped", conf -> conf
                .getProperties().setProperty(StandaloneBroker.NEREUS_FDB_DIR_KEY, kept.toString())));

        assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining("failed to start");
        assertThat(causes(t)).anySatisfy(c -> assertThat(c.getMessage()).isNotNull()
                .startsWith("Nereus metadata in the embedded store " + kept)
                .contains("Refusing to start")
                .contains("move the metadata away to start empty"));
    }

    private static void produce(StandaloneBroker broker, int n) throws Exception {
        PulsarClient client = broker.newClient();
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(TOPIC).create()) {
            for (int i = 0; i < n; i++) {
                producer.send("m-" + i);
            }
        }
    }

    private static String permissions(Path dir) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(dir));
    }

    private static List<Throwable> causes(Throwable t) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable c = t; c != null && !chain.contains(c); c = c.getCause()) {
            chain.add(c);
        }
        return chain;
    }
}
