<?php
/**
 * The block editor's live notice.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Loads `assets/live-status.js` into the block editor: after each save that is not an autosave
 * it asks the live-status route until the change is live on every edge node, and shows the answer
 * as the notice `varnish-edge-live`, with a link to the status panel for those who may open it.
 */
class Editor_Live_Notice {

	const HANDLE = 'varnish-edge-live-status';

	/** @var Settings */
	private $settings;

	/**
	 * Constructor.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Hooks: the block editor's assets.
	 */
	public function register(): void {
		add_action( 'enqueue_block_editor_assets', array( $this, 'enqueue' ) );
	}

	/**
	 * Action `enqueue_block_editor_assets`: only where a post is edited and a purger is configured.
	 */
	public function enqueue(): void {
		$screen = function_exists( 'get_current_screen' ) ? get_current_screen() : null;
		if ( ! $this->settings->is_configured() || ( $screen && 'post' !== $screen->base ) ) {
			return;
		}
		wp_enqueue_script(
			self::HANDLE,
			plugins_url( 'assets/live-status.js', PLUGIN_FILE ),
			array( 'wp-api-fetch', 'wp-data', 'wp-editor', 'wp-i18n', 'wp-notices', 'wp-url' ),
			VERSION,
			true
		);
		wp_add_inline_script(
			self::HANDLE,
			'window.varnishEdgeLive = ' . wp_json_encode(
				array(
					'path'      => '/' . Live_Status_Route::NAMESPACE . Live_Status_Route::ROUTE,
					'statusUrl' => current_user_can( 'manage_options' ) ? Live_Status::status_url() : '',
				)
			) . ';',
			'before'
		);
		wp_set_script_translations( self::HANDLE, 'varnish-edge' );
	}
}
