package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayDeque;
import java.util.NoSuchElementException;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The versioned store's queue of writes to prune: first in, first out, through wrap-arounds and growth. */
class PruneQueueTest {
    private record Write(long version, VersionedStore.Slot slot) {
    }

    @Test
    void givesBackWhatWasAdded_inOrder_whileTheRingWrapsAndGrows() {
        VersionedStore.PruneQueue queue = new VersionedStore.PruneQueue();
        ArrayDeque<Write> model = new ArrayDeque<>();
        Random random = new Random(7);
        long version = 0;
        for (int step = 0; step < 200_000; step++) {
            // phases that mostly add, then mostly remove, so the ring both wraps and grows while wrapped
            boolean adding = (step / 5_000) % 3 != 2;
            if (model.isEmpty() || random.nextInt(10) < (adding ? 7 : 2)) {
                VersionedStore.Slot slot = new VersionedStore.Slot(new byte[] {(byte) step}, step, version, null);
                queue.add(version, slot);
                model.addLast(new Write(version, slot));
                version += random.nextInt(3);
            } else {
                Write expected = model.pollFirst();
                assertThat(queue.firstVersion()).as("step %s", step).isEqualTo(expected.version());
                assertThat(queue.poll()).as("step %s", step).isSameAs(expected.slot());
            }
            assertThat(queue.size()).isEqualTo(model.size());
        }
        while (!model.isEmpty()) {
            assertThat(queue.poll()).isSameAs(model.pollFirst().slot());
        }
        assertThat(queue.isEmpty()).isTrue();
        assertThatThrownBy(queue::poll).isInstanceOf(NoSuchElementException.class);
        assertThatThrownBy(queue::firstVersion).isInstanceOf(NoSuchElementException.class);
    }
}
