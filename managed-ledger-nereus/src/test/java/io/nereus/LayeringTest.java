package io.nereus;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §2's layering, checked on the main classes of both modules (metadata-fdb is on this module's
 * classpath): the error model ({@code io.nereus.error}) is the lowest layer and knows no other Nereus package,
 * the core knows neither Pulsar nor FoundationDB, only metadata-fdb touches FoundationDB, the metadata layer
 * knows nothing above it, only the facade imports Pulsar, and the facade's rooms point one way
 * (config ← cursor ← ledger ← compaction). The Kafka adapter ({@code io.nereus.kafka}) sits on the stream API and
 * the metadata layer only, and is the only user of kafka-clients. A violation fails with the offending class and
 * dependency.
 */
class LayeringTest {
    private static final String[] CORE = {"io.nereus.stream..", "io.nereus.wal..", "io.nereus.generation..",
        "io.nereus.object..", "io.nereus.kafka..", "io.nereus.runtime.."};
    private static final String[] METADATA = {"io.nereus.metadata..", "io.nereus.fdb.."};

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.nereus");
    }

    @Test
    void errorModel_knowsNoOtherNereusPackage() {
        noClasses().that().resideInAPackage("io.nereus.error..").should()
                .dependOnClassesThat(resideInAPackage("io.nereus..").and(resideOutsideOfPackage("io.nereus.error..")))
                .check(classes);
    }

    @Test
    void core_knowsNeitherPulsarNorFoundationDb() {
        noClasses().that().resideInAnyPackage(CORE).should().dependOnClassesThat()
                .resideInAnyPackage("io.nereus.pulsar..", "org.apache.pulsar..", "org.apache.bookkeeper.mledger..",
                        "com.apple.foundationdb..", "io.nereus.fdb..")
                .check(classes);
    }

    @Test
    void foundationDb_onlyInMetadataFdb() {
        noClasses().that().resideOutsideOfPackages(METADATA).should().dependOnClassesThat()
                .resideInAnyPackage("com.apple.foundationdb..")
                .check(classes);
    }

    @Test
    void metadata_knowsNothingAboveIt() {
        noClasses().that().resideInAnyPackage(METADATA).should().dependOnClassesThat()
                .resideInAnyPackage("io.nereus.stream..", "io.nereus.wal..", "io.nereus.generation..",
                        "io.nereus.object..", "io.nereus.kafka..", "io.nereus.pulsar..", "org.apache.pulsar..",
                        "org.apache.bookkeeper..")
                .check(classes);
    }

    @Test
    void pulsar_onlyImportedByTheFacade() {
        noClasses().that().resideOutsideOfPackage("io.nereus.pulsar..").should().dependOnClassesThat()
                .resideInAnyPackage("org.apache.pulsar..", "org.apache.bookkeeper.mledger..")
                .check(classes);
    }

    @Test
    void kafkaAdapter_knowsNeitherPulsarNorBookKeeperNorFoundationDb() {
        noClasses().that().resideInAPackage("io.nereus.kafka..").should().dependOnClassesThat()
                .resideInAnyPackage("io.nereus.pulsar..", "org.apache.pulsar..", "org.apache.bookkeeper..",
                        "com.apple.foundationdb..", "io.nereus.fdb..", "io.nereus.wal..")
                .check(classes);
    }

    @Test
    void kafkaClients_onlyInTheKafkaAdapter() {
        noClasses().that().resideOutsideOfPackage("io.nereus.kafka..").should().dependOnClassesThat()
                .resideInAPackage("org.apache.kafka..")
                .check(classes);
    }

    @Test
    void facadeRooms_pointOneWay() {
        noClasses().that().resideInAPackage("io.nereus.pulsar.config..").should().dependOnClassesThat()
                .resideInAnyPackage("io.nereus.pulsar.cursor..", "io.nereus.pulsar.ledger..")
                .check(classes);
        noClasses().that().resideInAPackage("io.nereus.pulsar.cursor..").should().dependOnClassesThat()
                .resideInAPackage("io.nereus.pulsar.ledger..")
                .check(classes);
        noClasses().that().resideInAnyPackage("io.nereus.pulsar.config..", "io.nereus.pulsar.cursor..",
                "io.nereus.pulsar.ledger..").should().dependOnClassesThat()
                .resideInAPackage("io.nereus.pulsar.compaction..")
                .check(classes);
    }
}
