package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.tuple.Tuple;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Records which engine the conformance suite ran on. Exactly one of the two engine tests runs; the other is
 * skipped with a reason that shows in the test report.
 */
class EngineSelectionConformanceTest extends ConformanceTestBase {

    @Test
    void realClusterOnly_runsWhenAClusterFileIsConfigured() {
        Assumptions.assumeFalse(isEmbedded(),
                "ran on EmbeddedFdb; set -Dnereus.fdb.clusterFile=PATH to run against a real cluster");
        System.out.println("conformance suite target: " + target.describe());
        assertThat(target.embedded()).isEmpty();
        assertThat(db.getClass().getName()).doesNotContain("EmbeddedFdb");
    }

    @Test
    void embeddedOnly_runsWhenNoClusterFileIsConfigured() {
        Assumptions.assumeTrue(isEmbedded(),
                "ran on a real FoundationDB cluster (" + FdbTarget.configuredClusterFile().orElse(null) + ")");
        System.out.println("conformance suite target: " + target.describe());
        assertThat(target.embedded().orElseThrow()).isSameAs(db);
    }

    @Test
    void eachTest_worksUnderItsOwnPrefix_thatStartsEmpty() {
        assertThat(space.getKey()).startsWith(Tuple.from("nereus-conformance").pack());
        assertThat(readSpace()).isEmpty();
        put("a", "1");
        assertThat(get("a")).isEqualTo("1");
    }
}
