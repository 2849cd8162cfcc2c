<?php
/**
 * WP-CLI commands.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Purge, explain and manage the outbox from the command line.
 *
 * ## EXAMPLES
 *
 *     wp varnish-edge purge all --yes
 *     wp varnish-edge purge url https://example.com/hello-world/
 *     wp varnish-edge purge post 42
 *     wp varnish-edge purge key home pl-42
 *     wp varnish-edge explain 42
 *     wp varnish-edge outbox status
 *     wp varnish-edge outbox flush
 */
class CLI_Command {

	/**
	 * Longest wait, in seconds, for a purge to be live on every edge node.
	 */
	const LIVE_WAIT = 5;

	/** @var callable(string,string):void Output sink: ($level, $message). */
	private $out;

	/** @var callable(string,array):void Asks to go on; returns only when the answer is yes. */
	private $confirm;

	/**
	 * Constructor.
	 *
	 * @param callable|null $out     Output sink; defaults to WP_CLI (errors halt).
	 * @param callable|null $confirm Confirmation prompt; defaults to WP_CLI::confirm (exits on no).
	 */
	public function __construct( ?callable $out = null, ?callable $confirm = null ) {
		$this->confirm = $confirm ? $confirm : static function ( string $question, array $assoc_args ): void {
			\WP_CLI::confirm( $question, $assoc_args );
		};
		$this->out = $out ? $out : static function ( string $level, string $message ): void {
			switch ( $level ) {
				case 'error':
					\WP_CLI::error( $message );
					break;
				case 'success':
					\WP_CLI::success( $message );
					break;
				case 'warning':
					\WP_CLI::warning( $message );
					break;
				default:
					\WP_CLI::line( $message );
			}
		};
	}

	/**
	 * Hooks: the `wp varnish-edge` command, under WP-CLI only. Static: WP-CLI makes every public
	 * instance method a subcommand.
	 */
	public static function register(): void {
		if ( defined( 'WP_CLI' ) && WP_CLI && class_exists( '\WP_CLI' ) ) {
			\WP_CLI::add_command( 'varnish-edge', self::class );
		}
	}

	/**
	 * Write output.
	 *
	 * @param string $level line|success|warning|error.
	 */
	private function say( string $level, string $message ): void {
		call_user_func( $this->out, $level, $message );
	}

	/**
	 * Purge the whole site, a URL, a post, or surrogate keys; sent immediately, then waits (up to
	 * 5 s) until every edge node applied it and says so.
	 *
	 * ## OPTIONS
	 *
	 * <what>
	 * : all | url | post | key
	 *
	 * [<target>...]
	 * : URL, post ID, or keys (with or without the namespace prefix).
	 *
	 * [--yes]
	 * : Purge the whole site without asking for confirmation.
	 *
	 * [--[no-]wait]
	 * : Wait up to 5 s for every edge node to apply it and say where it is live (default);
	 * --no-wait returns once the purger accepted it.
	 *
	 * @param array $args       Positional.
	 * @param array $assoc_args Named.
	 */
	public function purge( array $args, array $assoc_args = array() ): void {
		$plugin = Plugin::instance();
		$what   = $args[0] ?? '';
		$rest   = array_slice( $args, 1 );
		switch ( $what ) {
			case 'all':
				if ( empty( $assoc_args['yes'] ) ) {
					call_user_func( $this->confirm, __( 'Purge every cached page of this site from Varnish? The next visitors will all reach WordPress.', 'varnish-edge' ), $assoc_args );
				}
				$inv = $plugin->manual->all( 'wp-cli' );
				break;
			case 'url':
				$inv = isset( $rest[0] ) ? $plugin->manual->url( $rest[0], 'wp-cli' ) : new \WP_Error( 'usage', __( 'Usage: wp varnish-edge purge url <url>', 'varnish-edge' ) );
				break;
			case 'post':
				$inv = isset( $rest[0] ) ? $plugin->manual->post( (int) $rest[0], 'wp-cli' ) : new \WP_Error( 'usage', __( 'Usage: wp varnish-edge purge post <id>', 'varnish-edge' ) );
				break;
			case 'key':
				$inv = $plugin->manual->keys( $rest, 'wp-cli' );
				break;
			default:
				$inv = new \WP_Error( 'usage', __( 'Usage: wp varnish-edge purge all|url <url>|post <id>|key <key>...', 'varnish-edge' ) );
		}
		if ( is_wp_error( $inv ) ) {
			$this->say( 'error', $inv->get_error_message() );
			return;
		}
		if ( ! $plugin->settings->is_configured() ) {
			$this->say( 'error', __( 'The purger is not configured (purger URL and secret).', 'varnish-edge' ) );
			return;
		}
		$plugin->queue->add( $inv );
		$at     = Live_Status_Log::now_ms();
		$events = $plugin->queue->commit();
		$report = $plugin->delivery->process( true );
		if ( $report['failed'] ) {
			/* translators: %s: error. */
			$this->say( 'error', sprintf( __( 'Queued in the outbox; delivery failed: %s', 'varnish-edge' ), $report['error'] ) );
			return;
		}
		if ( $report['refused'] ) {
			/* translators: %s: the purger's answer. */
			$this->say( 'error', sprintf( __( 'The purger refused the purge and it will not be retried: %s', 'varnish-edge' ), $report['error'] ) );
			return;
		}
		/* translators: %d: number of events. */
		$this->say( 'success', sprintf( __( 'Sent %d events.', 'varnish-edge' ), count( $events ) ) );
		// WP-CLI hands --no-wait over as wait=false.
		if ( false !== ( $assoc_args['wait'] ?? true ) ) {
			$status = $plugin->live->wait( $plugin->live_log->record( get_current_user_id(), 0, $at, $events ), self::LIVE_WAIT );
			$this->say( 'live' === $status['state'] ? 'success' : 'warning', $status['message'] );
		}
	}

	/**
	 * Show the keys and URLs an edit of a post would invalidate.
	 *
	 * ## OPTIONS
	 *
	 * <post>
	 * : Post ID.
	 *
	 * @param array $args       Positional.
	 * @param array $assoc_args Named.
	 */
	public function explain( array $args, array $assoc_args = array() ): void {
		$result = Plugin::instance()->manual->explain( (int) ( $args[0] ?? 0 ) );
		if ( is_wp_error( $result ) ) {
			$this->say( 'error', $result->get_error_message() );
			return;
		}
		$labels = array(
			'update'    => __( 'Content update', 'varnish-edge' ),
			'unpublish' => __( 'Unpublish, trash or delete', 'varnish-edge' ),
			'publish'   => __( 'Publish (from draft or schedule)', 'varnish-edge' ),
		);
		foreach ( $result as $case => $inv ) {
			$this->say( 'line', $labels[ $case ] . ':' );
			foreach ( array( 'hard_tags' => 'key (hard)', 'soft_tags' => 'key (soft)', 'hard_urls' => 'url (hard)', 'soft_urls' => 'url (soft)', 'prefixes' => 'prefix' ) as $prop => $label ) {
				foreach ( array_keys( $inv->$prop ) as $value ) {
					$this->say( 'line', '  ' . $label . '  ' . $value );
				}
			}
		}
	}

	/**
	 * Outbox status, or deliver every pending batch now (batches the purger refused included).
	 *
	 * ## OPTIONS
	 *
	 * <action>
	 * : status | flush
	 *
	 * @param array $args       Positional.
	 * @param array $assoc_args Named.
	 */
	public function outbox( array $args, array $assoc_args = array() ): void {
		$plugin = Plugin::instance();
		$action = $args[0] ?? 'status';
		if ( 'flush' === $action ) {
			$report = $plugin->delivery->flush( 100 );
			$stats  = $plugin->outbox->stats();
			if ( $report['failed'] ) {
				/* translators: 1: error, 2: pending batches. */
				$this->say( 'error', sprintf( __( 'Delivery failed: %1$s (%2$d batches pending).', 'varnish-edge' ), $report['error'], $stats['rows'] ) );
				return;
			}
			if ( $stats['dead'] ) {
				/* translators: 1: webhooks, 2: batches refused, 3: the purger's answer. */
				$this->say( 'error', sprintf( __( 'Delivered %1$d webhooks; the purger refused %2$d batches again: %3$s', 'varnish-edge' ), $report['sent'], $stats['dead'], $stats['dead_reason'] ) );
				return;
			}
			/* translators: 1: webhooks, 2: events, 3: pending batches. */
			$this->say( 'success', sprintf( __( 'Delivered %1$d webhooks (%2$d events); %3$d batches pending.', 'varnish-edge' ), $report['sent'], $report['events'], $stats['rows'] ) );
			return;
		}
		if ( 'status' !== $action ) {
			$this->say( 'error', __( 'Usage: wp varnish-edge outbox status|flush', 'varnish-edge' ) );
			return;
		}
		$stats  = $plugin->outbox->stats();
		$status = Outbox_Delivery::status();
		/* translators: %d: batches. */
		$this->say( 'line', sprintf( __( 'Pending batches: %d', 'varnish-edge' ), $stats['rows'] ) );
		/* translators: %d: events. */
		$this->say( 'line', sprintf( __( 'Pending events: %d', 'varnish-edge' ), $stats['events'] ) );
		/* translators: %s: date. */
		$this->say( 'line', sprintf( __( 'Last successful delivery: %s', 'varnish-edge' ), $status['last_success'] ? gmdate( 'c', $status['last_success'] ) : __( 'never', 'varnish-edge' ) ) );
		/* translators: %s: error. */
		$this->say( 'line', sprintf( __( 'Last error: %s', 'varnish-edge' ), '' !== $status['last_error'] ? $status['last_error'] : __( 'none', 'varnish-edge' ) ) );
		/* translators: 1: number of batches, 2: the purger's answer. */
		$this->say( 'line', $stats['dead'] ? sprintf( __( 'Refused by the purger (not retried until outbox flush): %1$d, latest: %2$s', 'varnish-edge' ), $stats['dead'], $stats['dead_reason'] ) : __( 'Refused by the purger: none', 'varnish-edge' ) );
	}
}
