<?php
/**
 * REST route of the live status.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * `GET /wp-json/varnish-edge/v1/live-status?post=<id>`: how far the current user's latest save of
 * that post got (needs `edit_post` on it); without `post`, their latest manual purge (needs the
 * purge capability). Always a fresh answer: it is never cached anywhere.
 *
 * It tells nobody which post ids exist: a post the user may not edit and one that does not exist
 * get the same 401 (logged out) or 403. Node names and addresses, the purger's URL and its errors
 * are for those who may purge (`Admin_Bar::capability()`); others get counts ("Live on 2 of 3
 * edge nodes; 1 node is down"). The block editor polls it: an unreachable purger is remembered
 * for a few seconds (`Live_Status::DOWN_FOR`, `retryAfter` and `Retry-After` in the answer).
 */
class Live_Status_Route {

	const NAMESPACE = 'varnish-edge/v1';
	const ROUTE     = '/live-status';

	/** @var Live_Status_Log */
	private $log;

	/** @var Live_Status */
	private $status;

	/**
	 * Constructor.
	 *
	 * @param Live_Status_Log $log    The users' recent actions.
	 * @param Live_Status     $status Reads how far they got.
	 */
	public function __construct( Live_Status_Log $log, Live_Status $status ) {
		$this->log    = $log;
		$this->status = $status;
	}

	/**
	 * Hooks: the route.
	 */
	public function register(): void {
		add_action( 'rest_api_init', array( $this, 'register_route' ) );
	}

	/**
	 * Action `rest_api_init`.
	 */
	public function register_route(): void {
		register_rest_route(
			self::NAMESPACE,
			self::ROUTE,
			array(
				'methods'             => \WP_REST_Server::READABLE,
				'callback'            => array( $this, 'respond' ),
				'permission_callback' => array( $this, 'permission' ),
				'args'                => array(
					'post' => array(
						'description'       => __( 'The post whose latest save by the current user is reported; without it, their latest manual purge.', 'varnish-edge' ),
						'type'              => 'integer',
						'minimum'           => 1,
						'validate_callback' => 'rest_validate_request_arg',
					),
				),
			)
		);
	}

	/**
	 * Permission: edit the post, or, without a post, purge. Checked before anything is read about
	 * the post: `edit_post` on an id that is no post is refused (`map_meta_cap()`: do_not_allow),
	 * with the very answer a post the user may not edit gets.
	 */
	public function permission( \WP_REST_Request $request ): bool|\WP_Error {
		if ( null === $request->get_param( 'post' ) ) {
			return current_user_can( Admin_Bar::capability() ) ? true : $this->forbidden( __( 'Sorry, you are not allowed to see the status of manual purges.', 'varnish-edge' ) );
		}
		return current_user_can( 'edit_post', (int) $request->get_param( 'post' ) ) ? true : $this->forbidden( __( 'Sorry, you are not allowed to see the status of this post.', 'varnish-edge' ) );
	}

	/**
	 * 401 when nobody is logged in, 403 otherwise.
	 */
	private function forbidden( string $message ): \WP_Error {
		return new \WP_Error( 'rest_forbidden', $message, array( 'status' => rest_authorization_required_code() ) );
	}

	/**
	 * The status, with the post it is about: with node details for those who may purge, in counts
	 * for the others; the status panel's link only for those who may open it.
	 */
	public function respond( \WP_REST_Request $request ): \WP_REST_Response {
		$post_id = (int) $request->get_param( 'post' );
		$status  = $this->status->of( $this->log->latest( get_current_user_id(), $post_id ), current_user_can( Admin_Bar::capability() ), true );
		if ( ! current_user_can( 'manage_options' ) ) {
			$status['statusUrl'] = '';
		}
		$response = new \WP_REST_Response( array( 'post' => $post_id ) + $status );
		$response->header( 'Cache-Control', 'no-store' );
		if ( isset( $status['retryAfter'] ) ) {
			$response->header( 'Retry-After', (string) $status['retryAfter'] );
		}
		return $response;
	}
}
