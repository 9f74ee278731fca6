package io.nereus.fdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.apple.foundationdb.Database;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FdbDatabasesTest {
    @TempDir
    Path tmp;

    @Test
    void open_withoutClusterFile_inMemory_isEmbedded() {
        try (Database db = FdbDatabases.open(Optional.empty(), Optional.empty(), Duration.ZERO)) {
            assertThat(db).isInstanceOf(EmbeddedFdb.class);
            db.run(tr -> {
                tr.set(new byte[] {1}, new byte[] {2});
                return null;
            });
        }
    }

    @Test
    void open_withoutClusterFile_withDirectory_isDurable() {
        Path dir = tmp.resolve("meta");
        try (Database db = FdbDatabases.open(Optional.empty(), Optional.of(dir), Duration.ZERO)) {
            db.run(tr -> {
                tr.set(new byte[] {1}, new byte[] {2});
                return null;
            });
        }
        try (Database db = FdbDatabases.open(Optional.empty(), Optional.of(dir), Duration.ZERO)) {
            assertThat((byte[]) db.read(tr -> tr.get(new byte[] {1}).join())).containsExactly(2);
        }
    }

    @Test
    void acquire_sameDirectoryTwice_sharesOneDatabase_closedByTheLastLease() {
        Path dir = tmp.resolve("shared");
        DatabaseLease first = FdbDatabases.acquire(Optional.empty(), Optional.of(dir), Duration.ZERO);
        DatabaseLease second = FdbDatabases.acquire(Optional.empty(), Optional.of(dir.resolve("..").resolve("shared")),
                Duration.ZERO);
        assertThat(second.database()).isSameAs(first.database());
        first.database().run(tr -> {
            tr.set(new byte[] {1}, new byte[] {2});
            return null;
        });

        first.close();
        first.close();
        assertThat((byte[]) second.database().read(tr -> tr.get(new byte[] {1}).join()))
                .as("the second holder still reads").containsExactly(2);
        second.close();

        assertThatThrownBy(() -> second.database().run(tr -> tr.get(new byte[] {1}).join()))
                .as("the last lease closed the database");
        try (DatabaseLease again = FdbDatabases.acquire(Optional.empty(), Optional.of(dir), Duration.ZERO)) {
            assertThat(again.database()).isNotSameAs(first.database());
            assertThat((byte[]) again.database().read(tr -> tr.get(new byte[] {1}).join())).containsExactly(2);
        }
    }

    @Test
    void acquire_sameDirectoryWithAnotherSyncInterval_refused() {
        Path dir = tmp.resolve("shared-sync");
        try (DatabaseLease first = FdbDatabases.acquire(Optional.empty(), Optional.of(dir), Duration.ZERO)) {
            assertThatThrownBy(() -> FdbDatabases.acquire(Optional.empty(), Optional.of(dir), Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(dir.toString()).hasMessageContaining("already open");
            assertThat(first.database()).isNotNull();
        }
    }

    @Test
    void acquire_inMemory_givesEachCallerItsOwnDatabase() {
        try (DatabaseLease a = FdbDatabases.acquire(Optional.empty(), Optional.empty(), Duration.ZERO);
             DatabaseLease b = FdbDatabases.acquire(Optional.empty(), Optional.empty(), Duration.ZERO)) {
            assertThat(a.database()).isNotSameAs(b.database());
        }
    }

    @Test
    void open_missingClusterFile_namesTheFile() {
        Path missing = tmp.resolve("nope.cluster");
        assertThatThrownBy(() -> FdbDatabases.open(Optional.of(missing), Optional.empty(), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(missing.toString());
    }

    @Test
    void open_clusterFileWithoutNativeClient_saysTheClientIsMissing() throws Exception {
        assumeTrue(System.getProperty("nereus.fdb.clusterFile", "").isBlank(),
                "a real cluster is configured, so the native client is present");
        Path clusterFile = tmp.resolve("fdb.cluster");
        Files.writeString(clusterFile, "test:test@127.0.0.1:4500\n");
        assertThatThrownBy(() -> FdbDatabases.open(Optional.of(clusterFile), Optional.empty(), Duration.ZERO))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("native client")
                .hasMessageContaining(clusterFile.toString());
    }
}
