// Embedded MongoDB-compatible server (mongo-java-server) for development and tests.
//
//   java -cp '.embedded-db/lib/*' dev/db/MongoLauncher.java [--data <file>] [--host 127.0.0.1] [--port 0]
//
// --data <file>: H2 MVStore file (persists across restarts); without it everything stays in memory.
// Prints exactly one line "LISTENING <port>" on stdout once bound (port 0 picks a free port).
// Exits on SIGTERM/SIGINT and when stdin closes, so it never outlives the parent process.
// With --data, every write is on disk before its answer leaves (GroupCommit below): a SIGKILL or a power
// cut loses no acknowledged write.

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.ServerVersion;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

public class MongoLauncher {

    private static final int EVENT_LOOPS = 32;

    public static void main(String[] args) {
        // Must be set before the first logger is created (i.e. before touching any server class).
        // Only defaults: -D on the command line wins, e.g. -Dorg.slf4j.simpleLogger.defaultLogLevel=debug.
        setDefault("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setDefault("org.slf4j.simpleLogger.logFile", "System.err"); // keep stdout for LISTENING
        // mongo-java-server logs every failed command (e.g. mongoose's autoCreate racing the first insert:
        // NamespaceExists) and every client connection reset as an ERROR with a stack trace. The client gets
        // those errors anyway, so they are only noise here.
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoWireProtocolHandler", "off");
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoExceptionHandler", "off");
        // Non-unique indexes are not implemented, only ignored (queries still work by scanning):
        // docs/operations.md says so once, instead of a warning per index in every database.
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase", "error");

        String data = null;
        String host = "127.0.0.1";
        int port = 0;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--data" -> data = require(args[i], value);
                case "--host" -> host = require(args[i], value);
                case "--port" -> port = Integer.parseInt(require(args[i], value));
                default -> fail("unknown argument: " + args[i]);
            }
            i++;
        }

        H2Backend h2 = null;
        MongoServer server;
        try {
            MongoBackend backend;
            if (data != null) {
                File parent = new File(data).getAbsoluteFile().getParentFile();
                if (parent != null) {
                    parent.mkdirs();
                }
                // No background writer: H2's own auto-commit writes chunks asynchronously, so only GroupCommit
                // stores, in the thread that waits for it. Fails fast if another process holds the file lock.
                MVStore store = new MVStore.Builder().fileName(data).autoCommitDisabled().open();
                // Every commit is synced before the next one starts, so the space of a chunk that died may be written
                // again at once (H2 waits 45 s by default, for file systems that write late, which let the file grow
                // by 45 s of commits). A command in progress keeps the chunks of the version it reads (handleCommand).
                store.setRetentionTime(0);
                h2 = new KeyedH2Backend(store);
                backend = h2;
            } else {
                backend = new KeyedMemoryBackend();
            }
            server = new MongoServer(backend.version(ServerVersion.MONGO_5_0));
            // A write's answer waits on its event loop for the group commit, so give the connections more loops
            // than Netty's default of two per core: a waiting loop then rarely holds up another connection's read.
            server.bind(new InetSocketAddress(host, port), 1, EVENT_LOOPS);
        } catch (RuntimeException e) {
            // One readable line instead of a stack trace: typically a locked data file or a busy port.
            fail("cannot start on " + host + ":" + port + (data != null ? " with data file " + data : "") + ": " + e);
            return;
        }

        final H2Backend store = h2;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // shutdownNow() drops the clients instead of waiting for them, then runs shutdown(),
            // which stops the event loops and closes the backend.
            server.shutdownNow();
            if (store != null) {
                store.close(); // idempotent; makes sure the MVStore file is committed and unlocked
            }
        }, "mongo-launcher-shutdown"));

        Thread stdinWatch = new Thread(() -> {
            try {
                InputStream in = System.in;
                byte[] buf = new byte[256];
                while (in.read(buf) >= 0) {
                    // ignore input; we only care about EOF
                }
            } catch (IOException ignored) {
                // a broken stdin means the parent is gone as well
            }
            System.exit(0); // runs the shutdown hook
        }, "mongo-launcher-stdin");
        stdinWatch.setDaemon(true);
        stdinWatch.start();

        System.out.println("LISTENING " + server.getLocalAddress().getPort());
        System.out.flush();
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static String require(String flag, String value) {
        if (value == null) {
            fail("missing value for " + flag);
        }
        return value;
    }

    private static void fail(String message) {
        System.err.println("MongoLauncher: " + message);
        System.exit(2);
    }

    // --- Conditional updates by _id, served from the _id index -----------------
    //
    // mongo-java-server uses an index only when a filter's fields are exactly the
    // index's fields, so a compare-and-set such as {_id: 7, status: "PENDING"}
    // scanned the whole collection. MongoDB finds the document by _id and checks
    // the other conditions on it; these subclasses make the embedded server do the
    // same: a filter that pins _id by equality (or $in) is answered from the _id
    // index, then matched in full against those documents only.

    /** The positions the _id index holds for the filter's _id, or null when the filter does not pin _id. */
    static <P> Iterable<P> positionsById(List<Index<P>> indexes, Document query) {
        Object id = query.get("_id");
        if (id == null || query.size() < 2) {
            return null; // no _id, or only _id: the collection's own planner handles it
        }
        Document idQuery = new Document("_id", id);
        for (Index<P> index : indexes) {
            if (index.getKeys().size() == 1 && index.getKeys().get(0).getKey().equals("_id") && index.canHandle(idQuery)) {
                return index.getPositions(idQuery);
            }
        }
        return null;
    }

    /**
     * findAndModify's answer, copied while the collection is still locked: with `new: true` the server
     * answers with its live document, which a later update could change before the answer is encoded
     * (300 concurrent $inc updates saw about 20 post-images twice). MongoDB answers with a snapshot.
     */
    static Document snapshotAnswer(Document answer) {
        Object value = answer.get("value");
        if (value instanceof Document document) {
            answer.put("value", document.cloneDeeply());
        }
        return answer;
    }

    static final class KeyedMemoryBackend extends MemoryBackend {
        @Override
        public MemoryDatabase openOrCreateDatabase(String databaseName) {
            return new MemoryDatabase(databaseName, getCursorRegistry()) {
                @Override
                protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
                    return new KeyedMemoryCollection(this, collectionName, options, cursorRegistry);
                }
            };
        }
    }

    static final class KeyedMemoryCollection extends MemoryCollection {
        KeyedMemoryCollection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
            super(database, name, options, cursors);
        }

        @Override
        public synchronized Document findAndModify(Document query) {
            return snapshotAnswer(super.findAndModify(query));
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize, Document fields) {
            Iterable<Integer> positions = positionsById(getIndexes(), query);
            return positions == null
                ? super.queryDocuments(query, orderBy, skip, limit, batchSize, fields)
                : matchDocuments(query, positions, orderBy, skip, limit, batchSize, fields);
        }
    }

    // --- Durable answers: a group commit --------------------------------------
    //
    // H2's MVStore keeps changes in memory and, by default, writes them about once a second, so a SIGKILL
    // lost the last second of acknowledged writes (and the id blocks they had reserved, which were then
    // handed out again). Here a write command's answer waits until a commit that began after the write
    // was applied has been written and synced. One thread commits for every write that arrived while the
    // previous commit ran, so concurrent writes share one commit and one fsync.

    /** Commands that change data: their answers wait for the group commit. */
    static final Set<String> WRITES = Set.of(
        "insert", "update", "delete", "findandmodify", "create", "drop", "dropdatabase", "createindexes",
        "dropindexes", "renamecollection");

    static boolean isWrite(String command, Document query) {
        String name = command.toLowerCase();
        if (WRITES.contains(name)) {
            return true;
        }
        // An aggregation writes only through $out or $merge.
        return name.equals("aggregate") && query.get("pipeline") instanceof List<?> stages && stages.stream()
            .anyMatch(stage -> stage instanceof Document d && (d.containsKey("$out") || d.containsKey("$merge")));
    }

    static final class GroupCommit {
        /** How long a commit waits for writes still being applied, so that they share it. */
        private static final long GATHER_NANOS = 300_000;
        /** How often a commit first rewrites the live pages of mostly dead chunks, so that their space is reused. */
        private static final long COMPACT_EVERY_NANOS = 10_000_000_000L;

        private final MVStore store;
        /** Tickets handed to writes that were applied before they took one. */
        private long issued;
        /** Every ticket up to this one is on disk. */
        private long durable;
        /** A thread is committing now. */
        private boolean committing;
        /** Writes being applied now, which will take a ticket. */
        private int applying;
        private long lastCompaction = System.nanoTime();

        GroupCommit(MVStore store) {
            this.store = store;
        }

        synchronized void beforeWrite() {
            applying++;
        }

        /** Returns once everything applied before this call is committed and synced. */
        void awaitDurable() {
            long upTo;
            boolean compact;
            synchronized (this) {
                if (--applying == 0 && committing) {
                    notifyAll(); // the commit gathering writes need not wait longer
                }
                long ticket = ++issued;
                while (committing && durable < ticket) {
                    waitUninterruptibly(0);
                }
                if (durable >= ticket) {
                    return; // a commit that began after this write covered it
                }
                committing = true; // lead a commit for every ticket issued so far
                // Writes being applied now would need a commit of their own right after this one: wait a moment
                // for them. Alone (one buyer at a time) there are none, and nothing waits.
                long until = System.nanoTime() + GATHER_NANOS;
                for (long left = GATHER_NANOS; applying > 0 && left > 0; left = until - System.nanoTime()) {
                    waitUninterruptibly(left);
                }
                upTo = issued;
                compact = System.nanoTime() - lastCompaction > COMPACT_EVERY_NANOS;
                if (compact) {
                    lastCompaction = System.nanoTime();
                }
            }
            boolean stored = false;
            try {
                if (compact) {
                    store.compact(50, 1 << 20); // the commit below writes what it moved
                }
                store.commit();
                store.sync();
                stored = true;
            } finally {
                synchronized (this) {
                    committing = false;
                    if (stored) {
                        durable = Math.max(durable, upTo);
                    }
                    notifyAll();
                }
            }
        }

        private void waitUninterruptibly(long nanos) {
            try {
                if (nanos == 0) {
                    wait();
                } else {
                    wait(nanos / 1_000_000, (int) (nanos % 1_000_000));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    static final class KeyedH2Backend extends H2Backend {
        private final GroupCommit groupCommit;

        KeyedH2Backend(MVStore store) {
            super(store);
            groupCommit = new GroupCommit(store);
        }

        @Override
        public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
            boolean write = isWrite(command, query);
            if (write) {
                groupCommit.beforeWrite();
            }
            MVStore.TxCounter reading = getMvStore().registerVersionUsage();
            try {
                return super.handleCommand(channel, databaseName, command, query);
            } finally {
                getMvStore().deregisterVersionUsage(reading);
                if (write) {
                    groupCommit.awaitDurable(); // a refused write too: it may have applied part of its batch
                }
            }
        }

        @Override
        protected MongoDatabase openOrCreateDatabase(String databaseName) {
            MVStore store = getMvStore(); // set by H2Backend's constructor before it opens the stored databases
            return new H2Database(databaseName, store, getCursorRegistry()) {
                @Override
                protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
                    // As H2Database names its maps, so stored data opens unchanged.
                    String fullName = getFullCollectionNamespace(collectionName);
                    MVMap<Object, Document> dataMap = store.openMap("databases." + fullName);
                    MVMap<String, Object> metaMap = store.openMap("meta." + fullName);
                    return new KeyedH2Collection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
                }
            };
        }
    }

    static final class KeyedH2Collection extends H2Collection {
        KeyedH2Collection(MongoDatabase database, String name, CollectionOptions options, MVMap<Object, Document> dataMap,
                          MVMap<String, Object> metaMap, CursorRegistry cursors) {
            super(database, name, options, dataMap, metaMap, cursors);
        }

        @Override
        public synchronized Document findAndModify(Document query) {
            return snapshotAnswer(super.findAndModify(query));
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize, Document fields) {
            Iterable<Object> positions = positionsById(getIndexes(), query);
            return positions == null
                ? super.queryDocuments(query, orderBy, skip, limit, batchSize, fields)
                : matchDocuments(query, positions, orderBy, skip, limit, batchSize, fields);
        }
    }
}
