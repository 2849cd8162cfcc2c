<?php
/**
 * Base of the classes that feed the response's surrogate keys.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * What every key source shares: the key scheme and the collector it adds keys to. Each source
 * hooks itself into WordPress (`register()`).
 */
abstract class Key_Source {

	/** @var Settings */
	protected $settings;

	/** @var Surrogate_Keys Collector of the response's keys. */
	protected $keys;

	/**
	 * Constructor.
	 *
	 * @param Settings       $settings Settings.
	 * @param Surrogate_Keys $keys     Collector of the response's keys.
	 */
	public function __construct( Settings $settings, Surrogate_Keys $keys ) {
		$this->settings = $settings;
		$this->keys     = $keys;
	}

	/**
	 * Hook the source into the WordPress actions and filters that show what a response renders.
	 */
	abstract public function register(): void;

	/**
	 * Key scheme of the current site.
	 */
	protected function scheme(): Key_Scheme {
		return new Key_Scheme( $this->settings->key_namespace() );
	}

	/**
	 * Add keys to the response.
	 *
	 * @param string[] $keys Keys.
	 */
	protected function add( array $keys ): void {
		$this->keys->add( $keys );
	}
}
