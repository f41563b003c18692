// RemoteFetch: http(s) fetching for feeds and images (issue 4 builds it out).
import AsyncHTTPClient
