package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereus.object.FilesystemObjectStore;
import io.nereus.object.ObjectStoreConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker opens the configured object store at start, before any topic, so a store that cannot open stops the
 * start with a message naming the setting. (That a started broker holds its store is
 * checked by {@link StandaloneBrokerTest}.)
 */
class ObjectStoreStartTest {

    @Test
    void start_objectStoreDirectoryHeldByAnotherStore_failsNamingTheSetting(@TempDir Path dir) throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "the object store is the plugin's");
        Path objects = dir.resolve("objects");
        try (FilesystemObjectStore holder = FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(objects))
                .get(30, TimeUnit.SECONDS)) {

            Throwable t = catchThrowable(() -> StandaloneBroker.start("ObjectStoreStartTest", conf -> conf
                    .getProperties().setProperty(StandaloneBroker.NEREUS_OBJECTS_DIR_KEY, objects.toString())));

            assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining("failed to start");
            assertThat(causes(t)).anySatisfy(c -> assertThat(c.getMessage()).isNotNull()
                    .startsWith("nereusObjectStoreDir=" + objects + ": the object store did not open")
                    .contains("has the directory open"));
            assertThat(holder.list("").get(30, TimeUnit.SECONDS)).as("the holder's store still works").isEmpty();
        }
    }

    private static List<Throwable> causes(Throwable t) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable c = t; c != null && !chain.contains(c); c = c.getCause()) {
            chain.add(c);
        }
        return chain;
    }
}
