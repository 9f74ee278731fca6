package io.nereus.pulsar.config;

import io.nereus.pulsar.NereusManagedLedgerStorage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps {@code conf/nereus.conf} and the README's configuration table in step with {@link NereusConfig#keys()},
 * both ways. The repository root comes from the {@code nereus.repo.dir} system property (set by surefire).
 */
class NereusConfDocsTest {
    private static final String STORAGE_CLASS_LINE =
            "managedLedgerStorageClassName=io.nereus.pulsar.NereusManagedLedgerStorage";
    private static final String COMPACTION_LINE =
            "compactionServiceFactoryClassName=io.nereus.pulsar.compaction.NereusCompactionServiceFactory";
    private static final String TOPIC_FACTORY_LINE =
            "topicFactoryClassName=io.nereus.pulsar.compaction.NereusTopicFactory";
    private static final Pattern TYPE_LINE =
            Pattern.compile("Type: (.+?)\\. Default: (.+?)\\. Allowed: (.+)\\.");
    private static final Pattern README_ROW = Pattern.compile("^\\| `(nereus\\w*)` \\| (.*) \\| (.*) \\|$");

    /** One documented key of conf/nereus.conf: its value and the comment block right above it. */
    record Documented(String key, String value, List<String> comment) {
    }

    private static Path repo;
    private static Map<String, Documented> conf;
    private static List<String> otherConfLines;

    @BeforeAll
    static void readConf() throws IOException {
        String dir = System.getProperty("nereus.repo.dir");
        assertThat(dir).as("system property nereus.repo.dir (set in managed-ledger-nereus/pom.xml)").isNotBlank();
        repo = Path.of(dir);
        conf = new LinkedHashMap<>();
        otherConfLines = new ArrayList<>();
        List<String> comment = new ArrayList<>();
        for (String line : Files.readAllLines(repo.resolve("conf/nereus.conf"))) {
            if (line.isBlank() || line.startsWith("###")) {
                comment.clear();
            } else if (line.startsWith("#")) {
                comment.add(line.substring(1).strip());
            } else if (line.startsWith(ConfigKey.PREFIX)) {
                int eq = line.indexOf('=');
                assertThat(eq).as("key=value line: %s", line).isPositive();
                Documented d = new Documented(line.substring(0, eq), line.substring(eq + 1), List.copyOf(comment));
                assertThat(conf.put(d.key(), d)).as("%s documented twice", d.key()).isNull();
                comment.clear();
            } else {
                otherConfLines.add(line);
                comment.clear();
            }
        }
    }

    @Test
    void nereusConf_documentsExactlyTheTableKeysInOrder() {
        assertThat(conf.keySet()).containsExactlyElementsOf(NereusConfig.keys().stream().map(ConfigKey::name).toList());
    }

    @Test
    void nereusConf_eachKeyCommentedWithItsDocTypeDefaultAndAllowedValues() {
        for (ConfigKey<?> key : NereusConfig.keys()) {
            Documented d = conf.get(key.name());
            assertThat(d.comment()).as("comment above %s", key.name()).hasSizeGreaterThanOrEqualTo(2);
            String typeLine = d.comment().get(d.comment().size() - 1);
            Matcher m = TYPE_LINE.matcher(typeLine);
            assertThat(m.matches()).as("last comment line of %s: %s", key.name(), typeLine).isTrue();
            assertThat(m.group(1)).as("type of %s", key.name()).isEqualTo(key.type().name());
            assertThat(m.group(2)).as("default of %s", key.name()).isEqualTo(key.defaultDoc());
            assertThat(m.group(3)).as("allowed values of %s", key.name()).isEqualTo(key.allowed());
            String doc = String.join(" ", d.comment().subList(0, d.comment().size() - 1));
            assertThat(doc).as("doc of %s", key.name()).isEqualTo(key.doc());
        }
    }

    @Test
    void nereusConf_valuesAreTheDefaults_emptyWhereTheDefaultComesFromTheBroker() {
        for (ConfigKey<?> key : NereusConfig.keys()) {
            boolean dynamic = key.defaultDoc().startsWith("the broker's") || key.defaultDoc().equals("empty");
            assertThat(conf.get(key.name()).value()).as("value of %s", key.name())
                    .isEqualTo(dynamic ? "" : key.defaultDoc());
        }
    }

    @Test
    void nereusConf_valuesParse_andGiveTheDefaultConfig() {
        Properties props = new Properties();
        conf.values().forEach(d -> props.setProperty(d.key(), d.value()));
        ServiceConfiguration withConf = NereusConfigTest.broker();
        withConf.setProperties(props);

        NereusConfig parsed = NereusConfig.from(withConf);
        NereusConfig defaults = NereusConfig.from(NereusConfigTest.broker());

        assertThat(parsed).usingRecursiveComparison().isEqualTo(defaults);
    }

    @Test
    void nereusConf_selectsTheNereusStorageAndCompactionAndSetsNoOtherBrokerKey() {
        assertThat(otherConfLines).containsExactly(STORAGE_CLASS_LINE, COMPACTION_LINE, TOPIC_FACTORY_LINE);
    }

    @Test
    void readme_tableListsEveryKeyWithItsDefaultAndMeaning() throws IOException {
        Map<String, String[]> rows = new LinkedHashMap<>();
        for (String line : Files.readAllLines(repo.resolve("README.md"))) {
            Matcher m = README_ROW.matcher(line);
            if (m.matches()) {
                assertThat(rows.put(m.group(1), new String[] {m.group(2), m.group(3)}))
                        .as("%s listed twice in README.md", m.group(1)).isNull();
            }
        }

        assertThat(rows.keySet()).containsExactlyElementsOf(NereusConfig.keys().stream().map(ConfigKey::name).toList());
        for (ConfigKey<?> key : NereusConfig.keys()) {
            String[] row = rows.get(key.name());
            assertThat(row[0].replace("`", "")).as("README default of %s", key.name()).isEqualTo(key.defaultDoc());
            assertThat(row[1]).as("README meaning of %s", key.name()).isEqualTo(key.doc());
        }
    }
}
