package io.nereus.fdb.embedded;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The keys of the {@link VersionedStore} in FoundationDB's order (unsigned bytes), for range reads, key selectors and
 * range clears: a persistent AVL tree, changed by one writer and read by any number of readers, each reading the
 * tree as it was published, unchanged for as long as it iterates.
 *
 * <p>The writer ({@link #put}, {@link #remove}, {@link #working}) changes a working tree and makes it the readers'
 * with {@link #publish}, which the store's owner calls, holding the writer's role, before a range read whenever the
 * working tree changed since the last publication ({@link #unpublished}); so a reader at any visible version finds
 * every key written at or below it, and a writer followed by no range read keeps changing its own nodes. Between two
 * publications the writer changes nodes it created since the last one in place and copies any other node it
 * changes (path copying), so a published tree never changes and a commit of many keys copies the upper levels of
 * the tree once, not once per key.
 *
 * <p>Why not {@link java.util.concurrent.ConcurrentSkipListMap}: with a million keys or more, a skip list insert
 * follows some forty index and node links to nodes and keys spread over the heap, most of them cache misses; the
 * broker's store gets a new key with every stream append (a generation-0 index record, or a run of them moved to
 * its new end), and the skip list took a third of the metadata engine's time for a commit of 1,000 streams (1.5
 * million keys: about 1.5 us an insert there, against about 0.2 us for a red-black tree on the same keys in the same
 * run). A balanced binary tree keeps the path a batch of inserts shares in cache.
 *
 * @param <V> what each key leads to; compared by identity in {@link #remove}
 */
final class OrderedIndex<V> {
    /** A node of the tree; immutable once published (its {@code edit} is below the writer's). */
    private static final class Node<V> {
        final byte[] key;
        final long edit;
        V value;
        Node<V> left;
        Node<V> right;
        int height;

        Node(byte[] key, V value, Node<V> left, Node<V> right, long edit) {
            this.key = key;
            this.value = value;
            this.left = left;
            this.right = right;
            this.edit = edit;
            this.height = 1 + Math.max(height(left), height(right));
        }
    }

    private volatile Node<V> working;
    private long workingSize;
    /** Nodes created with this edit belong to the working tree alone; writer only. */
    private long edit = 1;
    /** Whether the running {@link #delete} removed its key; writer only. */
    private boolean removed;
    private volatile Node<V> published;
    private volatile long publishedSize;

    /** Maps {@code key} to {@code value}, replacing what it mapped to; writer only. */
    void put(byte[] key, V value) {
        working = insert(working, key, value);
    }

    /** Removes {@code key} if it maps to {@code expected} (the same object); writer only. */
    boolean remove(byte[] key, V expected) {
        removed = false;
        working = delete(working, key, expected);
        return removed;
    }

    /** Makes the working tree the one readers see; writer only. */
    void publish() {
        if (published != working) {
            published = working;
            publishedSize = workingSize;
            edit++;
        }
    }

    /** Whether the working tree differs from the published one; any thread (a racy answer is re-checked by the caller). */
    boolean unpublished() {
        return published != working;
    }

    /** Keys in the published tree. */
    long size() {
        return publishedSize;
    }

    /**
     * The values of the published tree's keys in {@code [begin, end)} ({@code end == null}: to the end), ascending
     * or descending; lazily, from the tree published when this is called.
     */
    Iterator<V> published(byte[] begin, byte[] end, boolean reverse) {
        return iterate(published, begin, end, reverse);
    }

    /** As {@link #published}, over the working tree; writer only, and only while it does not change the tree. */
    Iterator<V> working(byte[] begin, byte[] end, boolean reverse) {
        return iterate(working, begin, end, reverse);
    }

    // ---- the tree

    private static int height(Node<?> n) {
        return n == null ? 0 : n.height;
    }

    /** {@code n} itself when the working tree owns it, else a copy the working tree owns. */
    private Node<V> own(Node<V> n) {
        return n.edit == edit ? n : new Node<>(n.key, n.value, n.left, n.right, edit);
    }

    private Node<V> insert(Node<V> n, byte[] key, V value) {
        if (n == null) {
            workingSize++;
            return new Node<>(key, value, null, null, edit);
        }
        int c = Bytes.compare(key, n.key);
        Node<V> o = own(n);
        if (c == 0) {
            o.value = value;
            return o;
        }
        if (c < 0) {
            o.left = insert(o.left, key, value);
        } else {
            o.right = insert(o.right, key, value);
        }
        return balance(o);
    }

    private Node<V> delete(Node<V> n, byte[] key, V expected) {
        if (n == null) {
            return null;
        }
        int c = Bytes.compare(key, n.key);
        if (c < 0) {
            Node<V> l = delete(n.left, key, expected);
            if (!removed) {
                return n;
            }
            Node<V> o = own(n);
            o.left = l;
            return balance(o);
        }
        if (c > 0) {
            Node<V> r = delete(n.right, key, expected);
            if (!removed) {
                return n;
            }
            Node<V> o = own(n);
            o.right = r;
            return balance(o);
        }
        if (n.value != expected) {
            return n;
        }
        removed = true;
        workingSize--;
        if (n.left == null) {
            return n.right;
        }
        if (n.right == null) {
            return n.left;
        }
        Node<V> min = n.right;
        while (min.left != null) {
            min = min.left;
        }
        Node<V> replacement = new Node<>(min.key, min.value, n.left, deleteMin(n.right), edit);
        return balance(replacement);
    }

    private Node<V> deleteMin(Node<V> n) {
        if (n.left == null) {
            return n.right;
        }
        Node<V> o = own(n);
        o.left = deleteMin(o.left);
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

    private static <V> Iterator<V> iterate(Node<V> root, byte[] begin, byte[] end, boolean reverse) {
        if (end != null && Bytes.compare(begin, end) >= 0) {
            return java.util.Collections.emptyIterator();
        }
        return reverse ? new Descending<>(root, begin, end) : new Ascending<>(root, begin, end);
    }

    /** In-order walk from the first key at or after {@code begin}, stopping at {@code end}. */
    private static final class Ascending<V> implements Iterator<V> {
        private final ArrayDeque<Node<V>> path = new ArrayDeque<>();
        private final byte[] end;

        Ascending(Node<V> root, byte[] begin, byte[] end) {
            this.end = end;
            for (Node<V> n = root; n != null; ) {
                if (Bytes.compare(n.key, begin) >= 0) {
                    path.push(n);
                    n = n.left;
                } else {
                    n = n.right;
                }
            }
        }

        @Override
        public boolean hasNext() {
            Node<V> n = path.peek();
            return n != null && (end == null || Bytes.compare(n.key, end) < 0);
        }

        @Override
        public V next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Node<V> n = path.pop();
            for (Node<V> c = n.right; c != null; c = c.left) {
                path.push(c);
            }
            return n.value;
        }
    }

    /** Reverse in-order walk from the last key before {@code end}, stopping below {@code begin}. */
    private static final class Descending<V> implements Iterator<V> {
        private final ArrayDeque<Node<V>> path = new ArrayDeque<>();
        private final byte[] begin;

        Descending(Node<V> root, byte[] begin, byte[] end) {
            this.begin = begin;
            for (Node<V> n = root; n != null; ) {
                if (end == null || Bytes.compare(n.key, end) < 0) {
                    path.push(n);
                    n = n.right;
                } else {
                    n = n.left;
                }
            }
        }

        @Override
        public boolean hasNext() {
            Node<V> n = path.peek();
            return n != null && Bytes.compare(n.key, begin) >= 0;
        }

        @Override
        public V next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Node<V> n = path.pop();
            for (Node<V> c = n.left; c != null; c = c.right) {
                path.push(c);
            }
            return n.value;
        }
    }
}
