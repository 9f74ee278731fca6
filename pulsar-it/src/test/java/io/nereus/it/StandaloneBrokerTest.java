package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereus.object.FilesystemObjectStore;
import io.nereus.object.ObjectStoreConfig;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The harness itself: clear, fast failures instead of hangs or shared state. */
class StandaloneBrokerTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    @Test
    void start_whileAnotherBrokerRuns_failsFastNamingTheRunningOne() throws Exception {
        assertThatThrownBy(() -> StandaloneBroker.start("second"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("another StandaloneBroker is running")
                .hasMessageContaining(StandaloneBrokerTest.class.getSimpleName());
        assertThat(BROKER.admin().namespaces().getNamespaces("public")).as("the running broker still answers")
                .contains("public/default");
    }

    @Test
    void start_invalidName_isRejected() {
        assertThatThrownBy(() -> StandaloneBroker.start("../escape"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("../escape");
    }

    @Test
    void storageMode_unknownValue_isRejectedNamingTheProperty() {
        String before = System.getProperty(StorageMode.PROPERTY);
        System.setProperty(StorageMode.PROPERTY, "rocksdb");
        try {
            assertThatThrownBy(StorageMode::current)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(StorageMode.PROPERTY)
                    .hasMessageContaining("rocksdb");
        } finally {
            if (before == null) {
                System.clearProperty(StorageMode.PROPERTY);
            } else {
                System.setProperty(StorageMode.PROPERTY, before);
            }
        }
    }

    @Test
    void broker_runningStorage_isTheSelectedOne() throws Exception {
        assertThat(BROKER.broker().storage()).isEqualTo(StorageMode.current());
        String configured = BROKER.admin().brokers().getRuntimeConfigurations().get("managedLedgerStorageClassName");
        assertThat(configured).isEqualTo(StorageMode.current().storageClassName());
        assertThat(BROKER.broker().webServiceUrl()).startsWith("http://127.0.0.1:");
    }

    @Test
    void broker_onNereus_holdsItsObjectStoreInTheBrokerDirectory() {
        assumeTrue(BROKER.broker().storage() == StorageMode.NEREUS, "the object store is the plugin's");
        Path objects = Path.of(System.getProperty(StandaloneBroker.WORK_DIR_PROPERTY), "brokers",
                StandaloneBrokerTest.class.getSimpleName(), "nereus-objects");

        Throwable second = catchThrowable(() -> FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(objects))
                .get(30, TimeUnit.SECONDS));

        assertThat(objects.resolve(".tmp")).isDirectory();
        assertThat(second).as("a second open of the directory the broker's store holds").isNotNull()
                .hasMessageContaining("has the directory open");
    }
}
