// ProbeCache: the SQLite probe cache (issue 4 builds it out).
import GRDB
