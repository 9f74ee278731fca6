package io.nereus.fdb.embedded;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.function.Predicate;

/**
 * The keys of the {@link VersionedStore} in FoundationDB's order (unsigned bytes), for range reads, key selectors and
 * range clears: a persistent AVL tree, changed by one writer and read by any number of readers, each reading the
 * tree as it was published, unchanged for as long as it iterates.
 *
 * <p>The writer ({@link #put}, {@link #retire}, {@link #working}) changes a working tree and makes it the readers'
 * with {@link #publish}, which the store's owner calls, holding the writer's role, before a range read whenever the
 * working tree changed since the last publication ({@link #unpublished}); so a reader at any visible version finds
 * every key written at or below it, and a writer followed by no range read keeps changing its own nodes. Between two
 * publications the writer changes nodes it created since the last one in place and copies any other node it
 * changes (path copying), so a published tree never changes and a commit of many keys copies the upper levels of
 * the tree once, not once per key.
 *
 * <p><b>Dead values stay until the tree is rebuilt.</b> A value leaves the index when it stops being live (the
 * {@code live} predicate turns false for good, as a pruned slot's does) and its owner says so with {@link #retire}:
 * its node stays, every iteration skips it, and a {@link #put} of its key reuses it. When the dead nodes outnumber
 * half the live ones, the working tree is rebuilt from its live nodes in one in-order pass, perfectly balanced. A
 * broker's store removes a key for nearly every key it adds (a generation-0 run moved to its new end leaves its old
 * key behind, pruned once out of the MVCC window); a removal walking the tree from the root cost as much as the
 * insert, about twenty nodes and keys read from all over the heap, while the rebuild reads each node about three
 * times per removal, in order, and lays the new tree out in that order.
 *
 * <p>Why not {@link java.util.concurrent.ConcurrentSkipListMap}: with a million keys or more, a skip list insert
 * follows some forty index and node links to nodes and keys spread over the heap, most of them cache misses; the
 * broker's store gets a new key with every stream append (a generation-0 index record, or a run of them moved to
 * its new end), and the skip list took a third of the metadata engine's time for a commit of 1,000 streams (1.5
 * million keys: about 1.5 us an insert there, against about 0.2 us for a red-black tree on the same keys in the same
 * run). A balanced binary tree keeps the path a batch of inserts shares in cache.
 *
 * @param <V> what each key leads to
 */
final class OrderedIndex<V> {
    /**
     * A node of the tree; immutable once published (its {@code edit} is below the writer's). It carries its key's
     * first sixteen bytes as two numbers ({@link #word}), so that a walk down the tree compares most keys without
     * reading their arrays: those are spread over the heap, and reading them was most of an insert's time.
     */
    private static final class Node<V> {
        final byte[] key;
        final long head0;
        final long head1;
        final long edit;
        V value;
        Node<V> left;
        Node<V> right;
        int height;

        Node(byte[] key, V value, Node<V> left, Node<V> right, long edit) {
            this(key, word(key, 0), word(key, 8), value, left, right, edit);
        }

        /** A node of {@code n}'s key and value with other children, in {@code edit}. */
        Node(Node<V> n, Node<V> left, Node<V> right, long edit) {
            this(n.key, n.head0, n.head1, n.value, left, right, edit);
        }

        private Node(byte[] key, long head0, long head1, V value, Node<V> left, Node<V> right, long edit) {
            this.key = key;
            this.head0 = head0;
            this.head1 = head1;
            this.value = value;
            this.left = left;
            this.right = right;
            this.edit = edit;
            this.height = 1 + Math.max(height(left), height(right));
        }
    }

    /**
     * Bytes {@code [from, from + 8)} of {@code key} as a big-endian number, bytes past the key's end as zeros: two keys
     * whose words differ compare as their words do, unsigned (a zero standing for a missing byte ties with a real
     * zero, and then the words are equal); equal words say nothing, and the keys are compared in full.
     */
    static long word(byte[] key, int from) {
        long w = 0;
        for (int i = from; i < from + 8; i++) {
            w = w << 8 | (i < key.length ? key[i] & 0xffL : 0);
        }
        return w;
    }

    /** {@link Bytes#compare} of {@code key}, whose words are {@code head0} and {@code head1}, with {@code n}'s key. */
    private static int compare(byte[] key, long head0, long head1, Node<?> n) {
        if (head0 != n.head0) {
            return Long.compareUnsigned(head0, n.head0);
        }
        if (head1 != n.head1) {
            return Long.compareUnsigned(head1, n.head1);
        }
        return Bytes.compare(key, n.key);
    }

    /** Dead nodes the working tree may hold before it is rebuilt, whatever its size. */
    private static final int MIN_DEAD_BEFORE_REBUILD = 1_024;

    private final Predicate<? super V> live;
    private volatile Node<V> working;
    /** Live keys of the working tree; writer only. */
    private long workingSize;
    /** Nodes of the working tree whose value is dead; writer only. */
    private long dead;
    /** Nodes created with this edit belong to the working tree alone; writer only. */
    private long edit = 1;
    private volatile Node<V> published;
    private volatile long publishedSize;

    /**
     * @param live whether a value is still in the index; once false for a value it must stay false, and its owner
     *             calls {@link #retire} once for it
     */
    OrderedIndex(Predicate<? super V> live) {
        this.live = live;
    }

    /** Maps {@code key} to {@code value}, replacing what it mapped to (a dead value included); writer only. */
    void put(byte[] key, V value) {
        working = insert(working, key, word(key, 0), word(key, 8), value);
    }

    /**
     * Counts one value of the working tree that has just become dead (the {@code live} predicate is false for it
     * from now on); its node stays, skipped by every iteration, until a {@link #put} of its key or the next
     * rebuild, which this call starts when dead nodes outnumber half the live ones. Writer only.
     */
    void retire() {
        workingSize--;
        dead++;
        if (dead >= MIN_DEAD_BEFORE_REBUILD && dead * 2 > workingSize) {
            rebuild();
        }
    }

    /** Makes the working tree the one readers see; writer only. */
    void publish() {
        publishedSize = workingSize; // a retirement changes the count without changing the tree
        if (published != working) {
            published = working;
            edit++;
        }
    }

    /** Whether the working tree differs from the published one; any thread (a racy answer is re-checked by the caller). */
    boolean unpublished() {
        return published != working;
    }

    /** Live keys in the published tree, as counted at the last {@link #publish}. */
    long size() {
        return publishedSize;
    }

    /** Dead nodes the working tree holds; writer only. */
    long deadNodes() {
        return dead;
    }

    /**
     * The live values of the published tree's keys in {@code [begin, end)} ({@code end == null}: to the end),
     * ascending or descending; lazily, from the tree published when this is called.
     */
    Iterator<V> published(byte[] begin, byte[] end, boolean reverse) {
        return iterate(published, begin, end, reverse);
    }

    /** As {@link #published}, over the working tree; writer only, and only while it does not change the tree. */
    Iterator<V> working(byte[] begin, byte[] end, boolean reverse) {
        return iterate(working, begin, end, reverse);
    }

    /**
     * Replaces the working tree with a balanced one of its live nodes, built in key order; the published tree, and
     * every reader's, is untouched.
     */
    private void rebuild() {
        NodeWalk<V> walk = new Ascending<>(working, Bytes.EMPTY, null);
        long n = workingSize;
        working = build(walk, n);
        if (nextLive(walk) != null) {
            throw new IllegalStateException("ordered index holds more live keys than it counted: " + n);
        }
        dead = 0;
    }

    /** A balanced tree of the next {@code n} live nodes of {@code walk}, in the working tree's edit. */
    private Node<V> build(NodeWalk<V> walk, long n) {
        if (n == 0) {
            return null;
        }
        long leftCount = (n - 1) / 2;
        Node<V> left = build(walk, leftCount);
        Node<V> middle = nextLive(walk);
        if (middle == null) {
            throw new IllegalStateException("ordered index holds fewer live keys than it counted");
        }
        Node<V> right = build(walk, n - 1 - leftCount);
        return new Node<>(middle, left, right, edit);
    }

    private Node<V> nextLive(NodeWalk<V> walk) {
        Node<V> n;
        while ((n = walk.nextNode()) != null && !live.test(n.value)) {
            // dead: left out of the rebuilt tree
        }
        return n;
    }

    // ---- the tree

    private static int height(Node<?> n) {
        return n == null ? 0 : n.height;
    }

    /** {@code n} itself when the working tree owns it, else a copy the working tree owns. */
    private Node<V> own(Node<V> n) {
        return n.edit == edit ? n : new Node<>(n, n.left, n.right, edit);
    }

    private Node<V> insert(Node<V> n, byte[] key, long head0, long head1, V value) {
        if (n == null) {
            workingSize++;
            return new Node<>(key, head0, head1, value, null, null, edit);
        }
        int c = compare(key, head0, head1, n);
        Node<V> o = own(n);
        if (c == 0) {
            if (!live.test(o.value)) {
                dead--;
                workingSize++;
            }
            o.value = value;
            return o;
        }
        if (c < 0) {
            o.left = insert(o.left, key, head0, head1, value);
        } else {
            o.right = insert(o.right, key, head0, head1, value);
        }
        return balance(o);
    }

    /** Restores the AVL balance at {@code o}, which the working tree owns and whose subtrees are balanced. */
    private Node<V> balance(Node<V> o) {
        int lh = height(o.left);
        int rh = height(o.right);
        if (lh - rh > 1) {
            if (height(o.left.left) < height(o.left.right)) {
                o.left = rotateLeft(own(o.left));
            }
            return rotateRight(o);
        }
        if (rh - lh > 1) {
            if (height(o.right.right) < height(o.right.left)) {
                o.right = rotateRight(own(o.right));
            }
            return rotateLeft(o);
        }
        o.height = 1 + Math.max(lh, rh);
        return o;
    }

    private Node<V> rotateRight(Node<V> o) {
        Node<V> l = own(o.left);
        o.left = l.right;
        o.height = 1 + Math.max(height(o.left), height(o.right));
        l.right = o;
        l.height = 1 + Math.max(height(l.left), o.height);
        return l;
    }

    private Node<V> rotateLeft(Node<V> o) {
        Node<V> r = own(o.right);
        o.right = r.left;
        o.height = 1 + Math.max(height(o.left), height(o.right));
        r.left = o;
        r.height = 1 + Math.max(o.height, height(r.right));
        return r;
    }

    // ---- iteration

    private Iterator<V> iterate(Node<V> root, byte[] begin, byte[] end, boolean reverse) {
        if (end != null && Bytes.compare(begin, end) >= 0) {
            return java.util.Collections.emptyIterator();
        }
        NodeWalk<V> walk = reverse ? new Descending<>(root, begin, end) : new Ascending<>(root, begin, end);
        return new LookaheadIterator<>() {
            @Override
            protected V advance() {
                Node<V> n;
                while ((n = walk.nextNode()) != null) {
                    V v = n.value;
                    if (live.test(v)) {
                        return v;
                    }
                }
                return null;
            }
        };
    }

    /** The nodes of a key range in order, dead ones included. */
    private interface NodeWalk<V> {
        /** The next node, or {@code null} at the end of the range. */
        Node<V> nextNode();
    }

    /** In-order walk from the first key at or after {@code begin}, stopping at {@code end}. */
    private static final class Ascending<V> implements NodeWalk<V> {
        private final ArrayDeque<Node<V>> path = new ArrayDeque<>();
        private final byte[] end;

        Ascending(Node<V> root, byte[] begin, byte[] end) {
            this.end = end;
            long b0 = word(begin, 0);
            long b1 = word(begin, 8);
            for (Node<V> n = root; n != null; ) {
                if (compare(begin, b0, b1, n) <= 0) {
                    path.push(n);
                    n = n.left;
                } else {
                    n = n.right;
                }
            }
        }

        @Override
        public Node<V> nextNode() {
            Node<V> n = path.peek();
            if (n == null || end != null && Bytes.compare(n.key, end) >= 0) {
                return null;
            }
            path.pop();
            for (Node<V> c = n.right; c != null; c = c.left) {
                path.push(c);
            }
            return n;
        }
    }

    /** Reverse in-order walk from the last key before {@code end}, stopping below {@code begin}. */
    private static final class Descending<V> implements NodeWalk<V> {
        private final ArrayDeque<Node<V>> path = new ArrayDeque<>();
        private final byte[] begin;

        Descending(Node<V> root, byte[] begin, byte[] end) {
            this.begin = begin;
            long e0 = end == null ? 0 : word(end, 0);
            long e1 = end == null ? 0 : word(end, 8);
            for (Node<V> n = root; n != null; ) {
                if (end == null || compare(end, e0, e1, n) > 0) {
                    path.push(n);
                    n = n.right;
                } else {
                    n = n.left;
                }
            }
        }

        @Override
        public Node<V> nextNode() {
            Node<V> n = path.peek();
            if (n == null || Bytes.compare(n.key, begin) < 0) {
                return null;
            }
            path.pop();
            for (Node<V> c = n.left; c != null; c = c.right) {
                path.push(c);
            }
            return n;
        }
    }
}
