<?php
/**
 * Surrogate keys on responses.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Collects the keys of what a response shows (fed by `Query_Keys`, `Render_Keys`, `Media_Keys`,
 * `Rest_Keys` and the `varnish_edge_response_keys` filter) and emits `xkey` (and, when the purge
 * pipeline is configured, `Surrogate-Control`) headers on anonymous front-end and REST GET
 * responses.
 */
class Surrogate_Keys {

	/** @var Settings */
	private $settings;

	/** @var array<string,bool> */
	private $keys = array();

	/** @var bool */
	private $buffering = false;

	/** @var bool The page was flushed before it was complete: the keys sent may miss some. */
	private $partial = false;

	/** @var bool A REST route without invalidation rules took part in the response. */
	private $unknown_route = false;

	/**
	 * Constructor.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Hooks: buffer front-end pages; emit the keys of REST responses.
	 */
	public function register(): void {
		add_action( 'template_redirect', array( $this, 'start' ), 0 );
		add_filter( 'rest_pre_serve_request', array( $this, 'on_rest_serve' ), 10, 3 );
		add_filter( 'rest_pre_echo_response', array( $this, 'on_rest_echo' ), PHP_INT_MAX, 3 );
	}

	/**
	 * Key scheme.
	 */
	private function scheme(): Key_Scheme {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/**
	 * Add keys.
	 *
	 * @param string[] $keys Keys.
	 */
	public function add( array $keys ): void {
		foreach ( $keys as $key ) {
			$this->keys[ $key ] = true;
		}
	}

	/**
	 * A REST route without invalidation rules (another plugin's, or a `wp/v2` route this plugin
	 * does not know) built the response or part of it: no long TTL, unless the code serving it
	 * names its keys through `varnish_edge_response_keys`.
	 */
	public function unknown_route(): void {
		$this->unknown_route = true;
	}

	/**
	 * Keys recorded so far.
	 *
	 * @return string[]
	 */
	public function keys(): array {
		return array_keys( $this->keys );
	}

	/**
	 * Whether this request may be cached for everyone.
	 */
	public function is_cacheable_request(): bool {
		$method = isset( $_SERVER['REQUEST_METHOD'] ) ? strtoupper( sanitize_key( wp_unslash( $_SERVER['REQUEST_METHOD'] ) ) ) : 'GET';
		if ( ! in_array( $method, array( 'GET', 'HEAD' ), true ) || is_user_logged_in() ) {
			return false;
		}
		if ( is_admin() || wp_doing_ajax() || wp_doing_cron() || ( defined( 'WP_CLI' ) && WP_CLI ) ) {
			return false;
		}
		return ! is_preview();
	}

	/* ------------------------------------------------------------ front end */

	/**
	 * Action `template_redirect` (early, after `Query_Keys` added the main query's keys): buffer
	 * the page so the headers can name everything rendered in it.
	 */
	public function start(): void {
		if ( ! $this->is_cacheable_request() ) {
			return;
		}
		$this->buffering = true;
		ob_start( array( $this, 'finish' ) );
	}

	/**
	 * Output buffer callback: send the headers once the whole page is known.
	 *
	 * @param int $phase Phase flags (PHP_OUTPUT_HANDLER_*).
	 */
	public function finish( string $html, int $phase ): string {
		// Normally the final flush. A theme flushing earlier sends the headers with what is known
		// by then: keys of what renders later are missing, so that response must not get the
		// long TTL (it stays on the microcache).
		if ( $this->buffering && ( $phase & ( PHP_OUTPUT_HANDLER_FINAL | PHP_OUTPUT_HANDLER_FLUSH ) ) ) {
			$this->buffering = false;
			$this->partial   = ! ( $phase & PHP_OUTPUT_HANDLER_FINAL );
			$this->send_headers();
		}
		return $html;
	}

	/**
	 * Emit the headers (no-op when headers are already out).
	 */
	public function send_headers(): void {
		if ( headers_sent() || array() === $this->keys ) {
			return;
		}
		header_remove( 'xkey' );
		$this->emit_headers();
	}

	/**
	 * Write the xkey lines (each within the line budget) and, when due, Surrogate-Control.
	 *
	 * @param int|null $status Response status; null for the current one.
	 */
	private function emit_headers( ?int $status = null ): void {
		$named = $this->add_filtered_keys();
		foreach ( $this->scheme()->header_lines( $this->keys() ) as $line ) {
			header( 'xkey: ' . $line, false );
		}
		if ( $this->partial || ( $this->unknown_route && 0 === $named ) ) {
			return;
		}
		foreach ( $this->surrogate_control( $status ) as $name => $value ) {
			header( $name . ': ' . $value );
		}
	}

	/**
	 * Keys other plugins and themes add to the current response (`varnish_edge_response_keys`).
	 *
	 * @return int How many keys they named.
	 */
	private function add_filtered_keys(): int {
		/**
		 * Keys to add to the current anonymous response, as names without the namespace (e.g.
		 * `shop`, `product-cat-12`): purge them later with `varnish_edge_purge_keys`.
		 *
		 * @param string[] $keys Key names.
		 */
		$names  = (array) apply_filters( 'varnish_edge_response_keys', array() );
		$scheme = $this->scheme();
		$named  = 0;
		foreach ( $names as $name ) {
			if ( is_scalar( $name ) && '' !== trim( (string) $name ) ) {
				$this->add( array( $scheme->custom( (string) $name ) ) );
				++$named;
			}
		}
		return $named;
	}

	/**
	 * Surrogate-Control for this response: the long TTL when purges are configured, the response
	 * is a cacheable status and the page does not ask to stay out of shared caches; nothing
	 * otherwise (Varnish keeps its 1 s microcache, or nothing for a private response).
	 *
	 * A page that sets `DONOTCACHEPAGE` (the constant page-cache plugins honour: form, cart and
	 * checkout plugins define it) or sends `Cache-Control: no-cache` prints something that must
	 * not live long, typically an anonymous nonce that expires after 12-24 hours. Personal
	 * responses (a cookie set, `private`, `no-store`) get nothing either.
	 *
	 * WordPress's generic 404 is the exception: it sends `wp_get_nocache_headers()` for
	 * browsers, not because the page is personal. It gets the long TTL (a 404 is purged by URL
	 * when content appears there), and its Cache-Control becomes the browser-side equivalent
	 * `max-age=0, must-revalidate`, since Varnish honours `private`, `no-store` and `no-cache`
	 * even beside Surrogate-Control.
	 *
	 * @param int|null $status Status code (defaults to the current one).
	 * @return array<string,string> Header names and values to send.
	 */
	public function surrogate_control( ?int $status = null ): array {
		$status = null === $status ? (int) http_response_code() : (int) $status;
		if ( ! $this->settings->is_configured() || ! in_array( $status, array( 200, 203, 204, 300, 301, 404, 410 ), true ) ) {
			return array();
		}
		if ( defined( 'DONOTCACHEPAGE' ) && DONOTCACHEPAGE ) {
			return array();
		}
		$headers     = array( 'Surrogate-Control' => 'max-age=' . $this->settings->ttl() );
		$generic_404 = $this->is_generic_404( $status );
		foreach ( headers_list() as $header ) {
			if ( $generic_404 && self::is_wp_nocache_header( $header ) ) {
				$headers['Cache-Control'] = 'max-age=0, must-revalidate';
				continue;
			}
			if ( preg_match( '/^(set-cookie:|cache-control:.*\b(private|no-store|no-cache)\b)/i', $header ) ) {
				return array();
			}
		}
		return $headers;
	}

	/**
	 * Whether this is the front end's "not found" page: the main query found nothing and
	 * WordPress answered 404 (`WP::handle_404()` sends its no-cache headers with it).
	 *
	 * @param int $status Response status.
	 */
	private function is_generic_404( int $status ): bool {
		return 404 === $status && did_action( 'template_redirect' ) && is_404();
	}

	/**
	 * Whether a header line is exactly the Cache-Control of `wp_get_nocache_headers()` (filters
	 * applied), i.e. WordPress's generic no-cache rather than a personal response's.
	 *
	 * @param string $header Header line as in headers_list().
	 */
	private static function is_wp_nocache_header( string $header ): bool {
		$parts = explode( ':', $header, 2 );
		if ( 2 !== count( $parts ) || 'cache-control' !== strtolower( trim( $parts[0] ) ) ) {
			return false;
		}
		$nocache = wp_get_nocache_headers();
		return isset( $nocache['Cache-Control'] ) && is_string( $nocache['Cache-Control'] )
			&& strtolower( trim( $parts[1] ) ) === strtolower( trim( $nocache['Cache-Control'] ) );
	}

	/**
	 * Filter `rest_pre_serve_request` (runs after the REST server set its status and headers,
	 * only for real HTTP requests): a HEAD response ends here, so its keys go out now.
	 *
	 * @param bool              $served  Whether the request was served.
	 * @param \WP_HTTP_Response $result  Response.
	 * @param \WP_REST_Request  $request Request.
	 * @return bool
	 */
	public function on_rest_serve( mixed $served, mixed $result, mixed $request ): mixed {
		if ( ! $served && $request instanceof \WP_REST_Request && 'HEAD' === $request->get_method() && $result instanceof \WP_HTTP_Response ) {
			$this->emit_rest_headers( $result->get_status() );
		}
		return $served;
	}

	/**
	 * Filter `rest_pre_echo_response` (after `_embed` dispatched the embedded requests, before
	 * the body is written): emit the keys of an anonymous GET response, embedded items included.
	 *
	 * @param \WP_REST_Server  $server  Server.
	 * @param \WP_REST_Request $request Request.
	 */
	public function on_rest_echo( mixed $data, mixed $server = null, mixed $request = null ): mixed {
		if ( $request instanceof \WP_REST_Request && 'GET' === $request->get_method() ) {
			$this->emit_rest_headers( (int) http_response_code() );
		}
		return $data;
	}

	/**
	 * Headers of an anonymous REST response, when it has keys and nothing was sent yet.
	 *
	 * @param int $status Response status.
	 */
	private function emit_rest_headers( int $status ): void {
		if ( ! is_user_logged_in() && ! headers_sent() && array() !== $this->keys ) {
			$this->emit_headers( $status );
		}
	}
}
